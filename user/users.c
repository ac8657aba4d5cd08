// SPDX-License-Identifier: GPL-2.0
/* Who the files and the command belong to. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "lib/utf8.h"
#include "users.h"

int users__invoking(struct creds *user)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	char u[64];
	int err;

	err = creds__invoking(user);
	if (err)
		fprintf(stderr, "memphase: SUDO_UID='%s' and SUDO_GID='%s' are not both valid ids: "
				"cannot tell who started memphase (unset both if root itself starts "
				"it)\n", utf8__esc_term(u, 24, su ? su : ""),
			utf8__esc_term(u + 32, 24, sg ? sg : ""));
	return err;
}

int users__choose(const struct env *e, struct creds *user, struct creds *run_as)
{
	char u[64];
	int err;

	err = users__invoking(user);
	if (err || e->mode != MODE_RUN)
		return err;
	/* under sudo the user is who the command runs as: nobody else, root least of all */
	if (!user->root && (e->user || e->allow_root)) {
		fprintf(stderr, "memphase: %s is for root itself: started through sudo by uid %u, "
				"the command runs as you\n", e->user ? "--user" : "--allow-root",
			(unsigned int)user->uid);
		return -EPERM;
	}
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
