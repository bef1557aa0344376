# src/scan/: read-only: every tree walked into the inventory by its store (store.h).
# It includes only the folders listed before it in Makefile.am (t-0011).
libqgc_a_SOURCES += src/scan/scan.c src/scan/scan.h
