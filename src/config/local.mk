# src/config/: the policy file: key table, parse, values, merge, --explain.
# It includes only the folders listed before it in Makefile.am (t-0011).
libqgc_a_SOURCES += src/config/config.c src/config/config.h src/config/config-int.h \
	src/config/config-table.c src/config/config-value.c src/config/config-parse.c \
	src/config/config-merge.c src/config/config-explain.c src/config/conftext.c src/config/conftext.h
