# src/plan/: the plan, its reasons and its text and JSON renderings.
# It includes only the folders listed before it in Makefile.am (t-0011).
libqgc_a_SOURCES += src/plan/reason.c src/plan/reason.h src/plan/plan.c src/plan/plan.h \
	src/plan/plan-json.c src/plan/render.c src/plan/render.h \
	src/plan/render-status.c src/plan/restore.c src/plan/restore.h
