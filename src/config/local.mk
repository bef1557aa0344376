# src/config/: the policy file: key table and Config value, load, root mode's merge, --explain.
# It includes only the folders listed before it in Makefile.am (t-0011).
libqgc_a_SOURCES += src/config/config.c src/config/config.h src/config/config-load.c \
	src/config/config-merge.c src/config/config-explain.c
