// SPDX-License-Identifier: GPL-2.0
/* memphase: where host RAM goes during LLM inference. Entry point: dispatch only. */
#include <stdio.h>
#include "env.h"
#include "session.h"

int main(int argc, char **argv)
{
	int err;

	/* the summary must not wait in a buffer if the target floods the terminal */
	setvbuf(stdout, NULL, _IOLBF, 0);
	err = env__parse(argc, argv);
	if (err)
		return err > 0 ? 0 : 2;
	err = session__run(&env);
	return err ? 1 : 0;
}
