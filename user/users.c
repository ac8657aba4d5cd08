// SPDX-License-Identifier: GPL-2.0
/* Who the files and the command belong to. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "lib/utf8.h"
#include "users.h"

int users__choose(const struct env *e, struct creds *user, struct creds *run_as)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	bool explicit = e->mode == MODE_RUN && (e->allow_root || e->user);
	char u[64];
	int err;

	err = creds__invoking(user);
	if (err && !explicit) {
		fprintf(stderr, "memphase: SUDO_UID='%s' and SUDO_GID='%s' are not both valid ids: "
				"cannot tell who started memphase (unset them, or pass --user NAME "
				"or --allow-root)\n", utf8__esc_term(u, 24, su ? su : ""),
			utf8__esc_term(u + 32, 24, sg ? sg : ""));
		return err;
	}
	if (err)
		creds__root(user);
	if (e->mode != MODE_RUN)
		return 0;
	if (e->user) {
		if (creds__lookup(run_as, e->user)) {
			fprintf(stderr, "memphase: --user: no such user '%s'\n",
				utf8__esc_term(u, sizeof(u), e->user));
			return -EINVAL;
		}
		return 0;
	}
	if (!user->root || e->allow_root) {
		*run_as = *user;
		return 0;
	}
	fprintf(stderr, "memphase: refusing to run the command as root: start memphase with sudo "
			"from your own account, or pass --user NAME or --allow-root\n");
	return -EPERM;
}
