/* owner.h: the read-only ownership check of one transcript, the way Qwen's delete path does it. */
#pragma once

#include "inventory.h"
#include "live.h"
#include "record.h"

/* Decide s->owner/owner_reason/cwd/hash from the parsed head of the transcript (head may be NULL
 * when it could not be read; why then says why), the project directory's name, and the runtime
 * claims found in chats/ (chats_fd, read-only). */
int owner_check(Session *s, const HeadInfo *head, const char *why, const char *project_dir,
                int chats_fd);

/* owner_check() with the claims of chats/ already loaded (the scan reads each chats/ once). */
int owner_check_claims(Session *s, const HeadInfo *head, const char *why, const char *project_dir,
                       const ClaimSet *claims);
