// SPDX-License-Identifier: GPL-2.0
/* memphase: where host RAM goes during LLM inference. Entry point: dispatch only. */
#include <stdio.h>
#include "env.h"
#include "report_command.h"
#include "session.h"
#include "watch.h"
#include "collect/target.h"

int main(int argc, char **argv)
{
	int err, status;

	/* the summary must not wait in a buffer if the target floods the terminal */
	setvbuf(stdout, NULL, _IOLBF, 0);
	err = env__parse(argc, argv);
	if (err)
		return err > 0 ? 0 : TARGET_EXIT_FAILED;
	if (env.mode == MODE_REPORT)
		report_command__run(&env, &status);
	else if (env.mode == MODE_WATCH)
		watch__run(&env, &status);
	else
		session__run(&env, &status);
	return status;
}
