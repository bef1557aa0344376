/* recover-int.h: what the files of the recovery pass share: recover.c (the scan and the steps)
 * and recover-marker.c (the pending marker). */
#pragma once

#include "recover.h"

/* Call step (when not NULL) with what was just changed. */
void recover_step(RecoverStepFn step, void *userdata, const char *what);
