# src/policy/: pure: inventory + config + now -> verdicts; no I/O.
# It includes only the folders listed before it in Makefile.am (t-0011).
libqgc_a_SOURCES += src/policy/policy.c src/policy/policy.h
