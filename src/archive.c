/* archive.c: not yet written. */
#include "autoconf.h"
