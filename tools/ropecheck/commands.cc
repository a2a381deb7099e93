// PLACEHOLDER: replaced by its owner.
#include "commands.h"
