# src/policy/: pure: inventory + config + now -> verdicts; no I/O.
# It includes only the folders listed before it in Makefile.am (t-0011).
libqgc_a_SOURCES += src/policy/policy.c src/policy/policy-caps.c src/policy/policy-reason.c \
	src/policy/policy.h src/policy/policy-int.h src/policy/policy-stale.c src/policy/policy-stale.h
