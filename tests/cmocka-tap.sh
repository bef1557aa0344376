#!/bin/sh
# cmocka-tap.sh PROGRAM: run a cmocka test program with TAP output, so that automake's
# tap-driver counts every test case (a skipped case is a SKIP, not part of a PASS).
# cmocka 1.1 writes a skipped case as "not ok N # SKIP", which TAP reads as a failure with a
# directive; it is rewritten as "ok N # SKIP". The program's exit status is kept (a sanitizer
# report at exit makes the program fail).
CMOCKA_MESSAGE_OUTPUT=TAP
export CMOCKA_MESSAGE_OUTPUT
exec 3>&1
st=$({ { "$@"; echo $? >&4; } | sed 's/^not ok \([0-9][0-9]*\) # SKIP/ok \1 # SKIP/' >&3; } 4>&1)
exit "${st:-1}"
