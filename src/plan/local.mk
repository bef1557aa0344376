# src/plan/: the plan, its reasons and its text and JSON renderings.
# It includes only the folders listed before it in Makefile.am (t-0011).
libqgc_a_SOURCES += src/plan/reason.c src/plan/reason.h src/plan/plan.c src/plan/plan.h \
	src/plan/plan-int.h src/plan/plan-json.c src/plan/render.c src/plan/render-int.h \
	src/plan/render-summary.c src/plan/render-status.c src/plan/render-cell.c src/plan/render-id.c \
	src/plan/restore.c src/plan/restore.h
