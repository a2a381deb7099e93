// PLACEHOLDER: replaced by its owner.
#pragma once
