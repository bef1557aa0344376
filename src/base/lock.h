/* lock.h: one qgc per tree at a time: flock(LOCK_EX|LOCK_NB) on G/.qgc.lock (mode 0600). */
#pragma once

/* The lock file's name in G. */
#define LOCK_FILE ".qgc.lock"

/* Returns an fd holding the lock (close it to release), -EWOULDBLOCK when another qgc holds it,
 * or another -errno. */
int lock_tree(const char *global_dir);
