/* hygiene-int.h: what the files of tree hygiene share (hygiene.c, hygiene-scan.c, hygiene-stale.c,
 * hygiene-reclaim.c). Not an interface: only they include it. */
#pragma once

#include "hashmap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "hygiene.h"
#include "inventory.h"
#include "util.h"

#define HYGIENE_DEPTH_MAX 32

/* Sizes and the newest mtime below dfd. A mount point, another filesystem or a directory
 * that cannot be listed makes it incomplete. */
typedef struct HygieneSum {
        uint64_t bytes, bytes_alloc;
        msec_t mtime;
        bool incomplete;
} HygieneSum;

/* What a tmp/<hash>/ holds, as far as the stale-tmp rule is concerned. */
typedef struct HygieneTmp {
        const char *why; /* why it is no candidate: NULL when everything is understood */
} HygieneTmp;

/* What one projects/<dir>/ holds, as far as the stale-project rule is concerned. */
typedef struct HygieneStale {
        const Inventory *inv;
        size_t tree;
        const char *dir;      /* the entry's name under projects/ */
        size_t first, end;    /* its sessions in inv (sorted by tree, project_dir) */
        dev_t dev;
        char *why;            /* the first reason it cannot go */
        bool cwd_back;        /* a recorded cwd exists, or is no temporary directory */
        bool transcripts;     /* a transcript is in chats/ */
        bool skip_org;        /* the executor's re-check: qgc's own edit of the organization
                               * file is no activity */
        StrBuf cwds;          /* distinct recorded cwds, each followed by '\n' */
        Hashmap cwd_set;      /* the offsets (+1) in cwds of those indexed, for the dedup */
        size_t cwd_indexed;   /* cwds.buf[0..cwd_indexed) is in cwd_set */
        msec_t mtime;         /* newest regular file inside, the marker excepted */
        uint64_t bytes, bytes_alloc;
        FileId marker;
} HygieneStale;

/* hygiene.c */
bool hygiene_endswith(const char *s, const char *suffix);
bool hygiene_is_hash(const char *s);
bool hygiene_is_legacy_chat(const char *n);
bool hygiene_is_checkpoint(const char *n);
int hygiene_open_dir(int dfd, const char *name, dev_t dev, struct stat *ret_st);
bool hygiene_regular(int dfd, const char *name, dev_t dev, struct stat *ret_st);
msec_t hygiene_mtime(const struct stat *st);
void hygiene_sum(int dfd, dev_t dev, unsigned depth, HygieneSum *s);
bool hygiene_tasks_empty(int hfd);
bool hygiene_lock_live(int hfd);
int hygiene_tmp_classify(int hfd, dev_t dev, HygieneTmp *ret);
bool hygiene_temp_path(const char *p);

/* hygiene-stale.c */
void hygiene_stale_done(HygieneStale *h);
int hygiene_stale_walk(HygieneStale *h, int pfd);
int hygiene_stale_judge_cwds(HygieneStale *h);
bool hygiene_stale_elsewhere(const char *id, void *userdata);
int hygiene_stale_examine(HygieneStale *h, int pfd);
