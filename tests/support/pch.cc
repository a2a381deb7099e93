// Compiles the tests' precompiled header once (tests/CMakeLists.txt); every test reuses it.
