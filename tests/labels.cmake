# CTest labels per test executable (ctest -L property, -L mutant, -L cli; the rest: unit).
set(ROPECHECK_TEST_LABEL_rope_properties_test property)
set(ROPECHECK_TEST_LABEL_sinusoidal_properties_test property)
set(ROPECHECK_TEST_LABEL_long_range_decay_test property)
set(ROPECHECK_TEST_LABEL_mutant_kill_test mutant)
set(ROPECHECK_TEST_LABEL_cli_test cli)
set(ROPECHECK_TEST_LABEL_attention_test property)
set(ROPECHECK_TEST_LABEL_kernel_levels_test property)
set(ROPECHECK_TEST_LABEL_bf16_storage_test property)
