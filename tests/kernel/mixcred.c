/*
 * A process whose threads run as different users (t_perm): started as
 * root, it starts a second thread that stays root, then gives only the
 * main thread (the group leader) the ids UID with the raw system call
 * (glibc's setresuid() would change every thread) and makes the process
 * dumpable again.  Read access to the leader alone is no access to the
 * process: the root thread's stack would be sampled too.
 *   mixcred UID FILE   idles once set up; FILE is created when it is
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;
	long uid;
	FILE *f;

	if (argc != 3)
		return 2;
	uid = atol(argv[1]);
	if (pthread_create(&th, NULL, idle, NULL))
		return 1;
	if (syscall(SYS_setresgid, uid, uid, uid) ||
	    syscall(SYS_setresuid, uid, uid, uid))
		return 1;
	/* A change of ids clears it; same-user access needs it set. */
	if (prctl(PR_SET_DUMPABLE, 1))
		return 1;
	f = fopen(argv[2], "w");
	if (!f)
		return 1;
	fclose(f);
	idle(NULL);
	return 0;
}
