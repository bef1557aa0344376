# src/model/: the inventory's records and containers; no I/O.
# It includes only the folders listed before it in Makefile.am (t-0011).
libqgc_a_SOURCES += src/model/inventory.c src/model/inventory.h src/model/store.h
