# Multi-process tests: each runs a driver (tests/mp/*.cpp -> mp_<name>) under
# the real launcher. GROVE_TOOL is the grove executable.
set(GROVE_TOOL $<TARGET_FILE:grove>)
