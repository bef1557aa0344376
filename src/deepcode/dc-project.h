/* dc-project.h: Deep Code's name for a project's directory under ~/.deepcode/projects/. */
#pragma once

/* getProjectCode(root) of Deep Code 0.2.1 (packages/core/src/session.ts): root with every '/'
 * and '\' turned into '-' and ':' removed; when that is longer than 64 UTF-16 units, the
 * sanitized basename of path.resolve(root) (every UTF-16 unit outside [A-Za-z0-9._-] a '-',
 * runs of '-' one, [-.] trimmed at both ends, at most 47 units, "project" when empty), '-' and
 * the first 16 hex digits of sha256(path.resolve(root)). *ret: a new string. 0, -ENOMEM, or
 * -EINVAL when root is not well-formed UTF-8 or is long and relative (path.resolve would need
 * the cwd Deep Code ran in): no code can be proven then. */
int dc_project_code(const char *root, char **ret);
