/* sha256.c: not yet written. */
#include "autoconf.h"
