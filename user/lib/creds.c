// SPDX-License-Identifier: GPL-2.0
/* The invoking user, and becoming it. */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/creds.h"

/* A decimal id: digits only, no sign, below (id_t)-1. */
static int parse_id(const char *s, unsigned int *out)
{
	unsigned long long v = 0;
	const char *p;

	if (!s || !*s || strlen(s) > 10)
		return -EINVAL;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (*p - '0');
	}
	if (v >= UINT_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}

/* name, groups: from the passwd entry of c->uid if there is one */
static void fill_groups(struct creds *c)
{
	struct passwd *pw = getpwuid(c->uid);
	int n = CREDS_MAX_GROUPS;

	c->name[0] = '\0';
	c->groups[0] = c->gid;
	c->ngroups = 1;
	if (!pw)
		return;
	snprintf(c->name, sizeof(c->name), "%s", pw->pw_name);
	if (getgrouplist(pw->pw_name, c->gid, c->groups, &n) >= 0)
		c->ngroups = n;
	else
		c->ngroups = 1;	/* more than CREDS_MAX_GROUPS: the primary group only */
}

int creds__invoking(struct creds *c)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	unsigned int u, g;

	memset(c, 0, sizeof(*c));
	c->uid = getuid();
	c->gid = getgid();
	if (geteuid() == 0 && (su || sg)) {
		if (parse_id(su, &u) || parse_id(sg, &g))
			return -EINVAL;
		c->uid = u;
		c->gid = g;
	}
	c->root = c->uid == 0;
	fill_groups(c);
	return 0;
}

void creds__root(struct creds *c)
{
	memset(c, 0, sizeof(*c));
	c->root = true;
	fill_groups(c);
}

int creds__lookup(struct creds *c, const char *user)
{
	struct passwd *pw = getpwnam(user);
	unsigned int id;

	memset(c, 0, sizeof(*c));
	if (!pw && !parse_id(user, &id))
		pw = getpwuid(id);
	if (!pw)
		return -ENOENT;
	c->uid = pw->pw_uid;
	c->gid = pw->pw_gid;
	c->root = c->uid == 0;
	fill_groups(c);
	return 0;
}

int creds__drop(const struct creds *c)
{
	/* not root (capabilities only): already the invoking user */
	if (c->root || geteuid() != 0)
		return 0;
	if (setgroups(c->ngroups > 0 ? c->ngroups : 0, c->groups) ||
	    setresgid(c->gid, c->gid, c->gid) || setresuid(c->uid, c->uid, c->uid))
		return -errno;
	/* no way back */
	if (setresuid(0, 0, 0) == 0)
		return -EPERM;
	return 0;
}
