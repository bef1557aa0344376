/* qwen-store.c: Qwen Code's store (store.h): its trees found as Qwen's Storage finds them
 * (roots.h), its project directory names (sanitizeCwd, qwen.h), its walk (qwen-scan.h). */
#include "autoconf.h"

#include "qwen.h"
#include "qwen-scan.h"
#include "qwen-store.h"
#include "roots.h"

/* Qwen's store takes any directory given as --root (it is asked last). */
static int qwen_store_detect(int dir_fd) {
        (void)dir_fd;
        return 1;
}

static int qwen_store_tree_from_dir(const char *dir, Tree *ret) {
        int r = roots_from_dir(dir, ret);

        if (r >= 0)
                ret->store = &qwen_store;
        return r;
}

static int qwen_store_tree_for_home(const char *home, Tree *ret, char **ret_why) {
        int r = roots_resolve_opts(&(RootsOptions){ .home = home }, ret, ret_why);

        if (r >= 0)
                ret->store = &qwen_store;
        return r;
}

const StoreOps qwen_store = {
        .name = "qwen",
        .detect = qwen_store_detect,
        .tree_from_dir = qwen_store_tree_from_dir,
        .tree_for_home = qwen_store_tree_for_home,
        .project_dir = qwen_sanitize_cwd,
        .scan = qwen_scan,
};
