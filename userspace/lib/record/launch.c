#include "record/launch.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf/elf.h"
#include "proc/maps.h"
#include "proc/mem.h"
#include "target/discover.h"
#include "target/layout.h"
#include "util/fail.h"

/* The entries into the VM: every Lua function runs under one of them. */
static const char *const vm_entries[] = {
	"lua_call", "lua_pcall", "lua_cpcall", "lua_resume",
};

#define MAX_BPS 8

struct bp {
	uint64_t addr;
	uint64_t word;		/* the word at addr before the breakpoint */
	const char *name;	/* NULL: the program's entry */
};

/* The name of the breakpoint at the dynamic linker's r_brk. */
static const char r_brk_name[] = "r_brk";

/*
 * PH_WAIT: at the entry of an image without LuaJIT (a shell that will
 * exec it, a host that will dlopen it), running on, traced, until an
 * exec or a LuaJIT mapping: looked for each time the dynamic linker
 * calls its debugger hook (r_debug.r_brk, as gdb learns of a dlopen),
 * and every WAIT_POLL_US for a program without one (static).
 */
enum { PH_EXEC, PH_ENTRY, PH_VM, PH_WAIT };

#define WAIT_POLL_US	10000

struct run {
	struct luw_launch *l;
	int phase;
	struct bp bp[MAX_BPS];
	int nbp;
	/* Breakpoints taken out: a thread may have hit one meanwhile. */
	uint64_t gone[MAX_BPS];
	int ngone;
	int stopped[LUW_LAUNCH_MAX_THREADS];
};

static int tid_index(struct run *r, pid_t tid)
{
	for (int i = 0; i < r->l->ntids; i++)
		if (r->l->tids[i] == tid)
			return i;
	return -1;
}

static int tid_add(struct run *r, pid_t tid)
{
	int i = tid_index(r, tid);

	if (i >= 0 || r->l->ntids == LUW_LAUNCH_MAX_THREADS)
		return i;
	i = r->l->ntids++;
	r->l->tids[i] = tid;
	r->stopped[i] = 0;
	r->l->sig[i] = 0;
	return i;
}

static void tid_del(struct run *r, pid_t tid)
{
	int i = tid_index(r, tid), last = r->l->ntids - 1;

	if (i < 0)
		return;
	r->l->tids[i] = r->l->tids[last];
	r->stopped[i] = r->stopped[last];
	r->l->sig[i] = r->l->sig[last];
	r->l->ntids--;
}

static int bp_set(struct run *r, pid_t tid, uint64_t addr, const char *name)
{
	long w;

	for (int i = 0; i < r->nbp; i++)
		if (r->bp[i].addr == addr)
			return 0;
	if (r->nbp == MAX_BPS)
		return -1;
	errno = 0;
	w = ptrace(PTRACE_PEEKDATA, tid, (void *)addr, NULL);
	if (errno)
		return -1;
	if (ptrace(PTRACE_POKEDATA, tid, (void *)addr,
		   (void *)(((uint64_t)w & ~0xffULL) | 0xcc)))
		return -1;
	r->bp[r->nbp++] = (struct bp){ addr, (uint64_t)w, name };
	return 0;
}

/*
 * Every breakpoint out, the last first: one set after another in the
 * same word saved that word with the other's int3 in it.
 */
static void bp_clear(struct run *r, pid_t tid)
{
	while (r->nbp) {
		struct bp *b = &r->bp[--r->nbp];

		ptrace(PTRACE_POKEDATA, tid, (void *)b->addr, (void *)b->word);
		if (r->ngone < MAX_BPS)
			r->gone[r->ngone++] = b->addr;
	}
}

/*
 * A SIGTRAP stop of tid at one of the breakpoints (set, or taken out
 * since): its pc back on the instruction, the breakpoint returned (NULL
 * for one taken out).  found: whether it was one.
 */
static struct bp *bp_hit(struct run *r, pid_t tid, int *found)
{
	struct user_regs_struct u;

	*found = 0;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &u))
		return NULL;
	for (int i = 0; i < r->nbp; i++) {
		if (r->bp[i].addr == u.rip - 1) {
			u.rip--;
			*found = !ptrace(PTRACE_SETREGS, tid, NULL, &u);
			return *found ? &r->bp[i] : NULL;
		}
	}
	for (int i = 0; i < r->ngone; i++) {
		if (r->gone[i] == u.rip - 1) {
			u.rip--;
			*found = !ptrace(PTRACE_SETREGS, tid, NULL, &u);
			return NULL;
		}
	}
	return NULL;
}

static uint64_t auxv_get(pid_t pid, uint64_t type)
{
	char path[64];
	uint64_t v[2], val = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (read(fd, v, sizeof(v)) == sizeof(v) && v[0] != AT_NULL)
		if (v[0] == type)
			val = v[1];
	close(fd);
	return val;
}

/*
 * The address of the dynamic linker's debugger hook, which it calls
 * after each change to the list of loaded objects (<link.h>, struct
 * r_debug): the program's DT_DEBUG points at r_debug, filled in by the
 * time the program reaches its entry.  0 without one (a static program).
 */
static uint64_t r_brk(pid_t pid)
{
	uint64_t phdr = auxv_get(pid, AT_PHDR), n = auxv_get(pid, AT_PHNUM);
	uint64_t bias = 0, dyn = 0, rd = 0, brk = 0;
	Elf64_Phdr ph;
	Elf64_Dyn d;

	for (uint64_t i = 0; phdr && i < n && i < 64; i++) {
		if (luw_mem_read(pid, phdr + i * sizeof(ph), &ph, sizeof(ph)))
			return 0;
		if (ph.p_type == PT_PHDR)
			bias = phdr - ph.p_vaddr;
		else if (ph.p_type == PT_DYNAMIC)
			dyn = ph.p_vaddr;
	}
	if (!dyn)
		return 0;
	for (uint64_t a = dyn + bias; !rd; a += sizeof(d)) {
		if (luw_mem_read(pid, a, &d, sizeof(d)) || d.d_tag == DT_NULL)
			return 0;
		if (d.d_tag == DT_DEBUG)
			rd = d.d_un.d_ptr;
	}
	/* struct r_debug: r_version, r_map, then r_brk. */
	if (luw_mem_read(pid, rd + 16, &brk, sizeof(brk)))
		return 0;
	return brk;
}

/*
 * tid, stopped on the breakpoint b (its pc back on it), past it: the
 * instruction run once in its own place, the breakpoint put back.  A
 * signal that comes meanwhile is kept in *sig for its continue.
 */
static void bp_step(pid_t tid, const struct bp *b, int *sig)
{
	int st;

	ptrace(PTRACE_POKEDATA, tid, (void *)b->addr, (void *)b->word);
	if (!ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) &&
	    waitpid(tid, &st, __WALL) == tid && WIFSTOPPED(st) &&
	    WSTOPSIG(st) != SIGTRAP)
		*sig = WSTOPSIG(st);
	ptrace(PTRACE_POKEDATA, tid, (void *)b->addr,
	       (void *)((b->word & ~0xffULL) | 0xcc));
}

/*
 * At the program's entry: a breakpoint on each VM entry the object with
 * LuaJIT's interpreter exports.  How many were set.
 */
static int plant_vm(struct run *r, pid_t tid)
{
	struct luw_maps maps;
	int set = 0, done = 0;

	if (luw_maps_read(r->l->pid, &maps))
		return 0;
	for (size_t i = 0; i < maps.n && !done; i++) {
		const struct luw_map *m = &maps.v[i];
		uint64_t s, ie, e, bias, a;
		uint32_t cfa;
		char p[4200], why[256];
		Elf *elf;
		int fd;

		if (!(m->prot & LUW_MAP_X) || m->path[0] != '/' ||
		    luw_maps_file(r->l->pid, m, p, sizeof(p)))
			continue;
		elf = luw_elf_open(p, &fd, why, sizeof(why));
		if (!elf)
			continue;
		if (!luw_layout_vm_fde(elf, &s, &ie, &e, &cfa, why,
				       sizeof(why)) &&
		    !luw_layout_bias(elf, m, &bias)) {
			done = 1;
			for (size_t k = 0; k < sizeof(vm_entries) /
					       sizeof(vm_entries[0]); k++)
				if ((!luw_elf_symbol(elf, SHT_DYNSYM,
						     vm_entries[k], 1, &a) ||
				     !luw_elf_symbol(elf, SHT_SYMTAB,
						     vm_entries[k], 1, &a)) &&
				    !bp_set(r, tid, a + bias, vm_entries[k]))
					set++;
		}
		elf_end(elf);
		close(fd);
	}
	luw_maps_free(&maps);
	return set;
}

static void cont(pid_t tid, int sig)
{
	ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig);
}

/* How the program ended, for the message. */
static void ended(int st, char *buf, size_t n)
{
	if (WIFEXITED(st))
		snprintf(buf, n, "exit status %d", WEXITSTATUS(st));
	else
		snprintf(buf, n, "killed by signal %d", WTERMSIG(st));
}

/*
 * Every thread but the one stopped already (tid) stopped too: an
 * interrupt each, then their stops.  A thread that hits a breakpoint
 * meanwhile is put back on its instruction; a signal that stops one is
 * kept for the release.  0, or -1 when the process ended.
 */
static int stop_all(struct run *r, pid_t tid, char *err, size_t n)
{
	int pending = 0;

	for (int i = 0; i < r->l->ntids; i++) {
		r->stopped[i] = r->l->tids[i] == tid;
		if (!r->stopped[i] &&
		    !ptrace(PTRACE_INTERRUPT, r->l->tids[i], NULL, NULL))
			pending++;
		else
			r->stopped[i] = 1;
	}
	while (pending > 0) {
		int st, i, ev, found;
		pid_t t = waitpid(-1, &st, __WALL);

		if (t < 0) {
			if (errno == EINTR)
				continue;
			return luw_fail(err, n, "waiting for %d: %s",
					(int)r->l->pid, strerror(errno));
		}
		i = tid_index(r, t);
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (t == r->l->pid) {
				char how[64];

				ended(st, how, sizeof(how));
				return luw_fail(err, n, "the program ended "
						"(%s) before it was attached",
						how);
			}
			if (i >= 0 && !r->stopped[i])
				pending--;
			tid_del(r, t);
			continue;
		}
		if (!WIFSTOPPED(st) || i < 0) {
			if (WIFSTOPPED(st) && (i = tid_add(r, t)) >= 0)
				r->stopped[i] = 1;	/* a new thread's stop */
			continue;
		}
		ev = st >> 16;
		if (ev == PTRACE_EVENT_CLONE) {
			unsigned long nt;

			/* A thread made: its first stop is to come, unless
			 * it came first (above). */
			if (!ptrace(PTRACE_GETEVENTMSG, t, NULL, &nt) &&
			    tid_index(r, (pid_t)nt) < 0 &&
			    tid_add(r, (pid_t)nt) >= 0)
				pending++;
		}
		if (r->stopped[i])
			continue;
		/* Any stop will do: it is let go by PTRACE_DETACH. */
		if (!ev && WSTOPSIG(st) == SIGTRAP) {
			bp_hit(r, t, &found);
			if (!found)
				r->l->sig[i] = SIGTRAP;
		} else if (!ev) {
			r->l->sig[i] = WSTOPSIG(st);
		}
		r->stopped[i] = 1;
		pending--;
	}
	return 0;
}

/* Every thread stopped by stop_all let go, with the signal it stopped with. */
static void cont_all(struct run *r)
{
	for (int i = 0; i < r->l->ntids; i++) {
		cont(r->l->tids[i], r->l->sig[i]);
		r->l->sig[i] = 0;
		r->stopped[i] = 0;
	}
}

/*
 * The next stop or exit of a traced thread, as waitpid(-1) gives it; in
 * PH_WAIT, 0 as soon as the process maps LuaJIT's interpreter instead.
 */
static pid_t next_event(struct run *r, int *st)
{
	for (;;) {
		pid_t t = waitpid(-1, st, __WALL |
				  (r->phase == PH_WAIT ? WNOHANG : 0));

		if (t || r->phase != PH_WAIT)
			return t;
		if (luw_discover_luajit(r->l->pid) > 0)
			return 0;
		usleep(WAIT_POLL_US);
	}
}

/*
 * PH_WAIT, and LuaJIT's interpreter mapped now: the program stopped
 * where it is (tid, 0 for none, stopped already; on the breakpoint b
 * when b is not NULL, to be stepped over), a breakpoint on each VM
 * entry.  1 when it runs on to them; 0 when there are none, the program
 * stopped with no breakpoint left in it; -1 when it ended.
 */
static int vm_appeared(struct run *r, pid_t tid, const struct bp *b,
		       char *err, size_t n)
{
	int sig = 0;

	if (stop_all(r, tid, err, n))
		return -1;
	if (!tid)
		tid = r->l->tids[0];
	if (plant_vm(r, tid) > 0) {
		r->phase = PH_VM;
		if (b) {
			bp_step(tid, b, &sig);
			r->l->sig[tid_index(r, tid)] = sig;
		}
		cont_all(r);
		return 1;
	}
	bp_clear(r, tid);
	return 0;
}

int luw_launch_start(char *const argv[], struct luw_launch *l, char *err,
		     size_t n)
{
	struct run r;
	pid_t pid;
	int st;

	memset(l, 0, sizeof(*l));
	memset(&r, 0, sizeof(r));
	r.l = l;
	pid = fork();
	if (pid < 0)
		return luw_fail(err, n, "fork: %s", strerror(errno));
	if (!pid) {
		raise(SIGSTOP);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st) ||
	    ptrace(PTRACE_SEIZE, pid, NULL,
		   (void *)(long)(PTRACE_O_TRACEEXEC | PTRACE_O_TRACECLONE |
				  PTRACE_O_EXITKILL))) {
		int e = errno;

		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return luw_fail(err, n, "tracing the program: %s", strerror(e));
	}
	l->pid = pid;
	tid_add(&r, pid);
	kill(pid, SIGCONT);
	for (;;) {
		int ev, sig, found;
		struct bp *b;
		pid_t t = next_event(&r, &st);

		if (t < 0) {
			if (errno == EINTR)
				continue;
			return luw_fail(err, n, "waiting for %d: %s", (int)pid,
					strerror(errno));
		}
		if (!t) {
			/* LuaJIT mapped, seen by the poll. */
			int k = vm_appeared(&r, 0, NULL, err, n);

			if (k > 0)
				continue;
			if (k < 0)
				luw_launch_release(l);
			return k;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (t == pid) {
				char how[64];

				ended(st, how, sizeof(how));
				return luw_fail(err, n, "%s ended (%s) before "
						"it ran any Lua", argv[0], how);
			}
			tid_del(&r, t);
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		tid_add(&r, t);
		ev = st >> 16;
		sig = WSTOPSIG(st);
		if (ev == PTRACE_EVENT_EXEC) {
			/* A new image (again, for a script that execs its
			 * interpreter): its threads and breakpoints gone. */
			uint64_t entry = auxv_get(pid, AT_ENTRY);

			l->ntids = 0;
			tid_add(&r, pid);
			r.nbp = r.ngone = 0;
			if (!entry || bp_set(&r, pid, entry, NULL)) {
				kill(pid, SIGKILL);
				waitpid(pid, &st, 0);
				return luw_fail(err, n, "no breakpoint at the "
						"program's entry");
			}
			r.phase = PH_ENTRY;
			cont(pid, 0);
			continue;
		}
		if (ev == PTRACE_EVENT_CLONE) {
			unsigned long nt;

			/* Known now: its first stop may come after a stop
			 * of them all, which must count it. */
			if (!ptrace(PTRACE_GETEVENTMSG, t, NULL, &nt))
				tid_add(&r, (pid_t)nt);
			cont(t, 0);
			continue;
		}
		if (ev == PTRACE_EVENT_STOP) {
			cont(t, 0);	/* a thread's first stop: it runs on */
			continue;
		}
		if (sig != SIGTRAP || r.phase == PH_EXEC) {
			cont(t, sig);
			continue;
		}
		b = bp_hit(&r, t, &found);
		if (!found) {
			cont(t, sig);
			continue;
		}
		if (!b) {
			cont(t, 0);	/* one taken out already */
			continue;
		}
		if (b->name == r_brk_name) {
			/* An object loaded (or unloaded): LuaJIT now? */
			sig = 0;
			if (r.phase == PH_WAIT && luw_discover_luajit(pid) > 0) {
				int k = vm_appeared(&r, t, b, err, n);

				if (k > 0)
					continue;
				if (k < 0)
					luw_launch_release(l);
				return k;
			}
			bp_step(t, b, &sig);
			cont(t, sig);
			continue;
		}
		if (r.phase == PH_ENTRY) {
			bp_clear(&r, t);
			if (plant_vm(&r, t) > 0) {
				r.phase = PH_VM;
				cont(t, 0);
				continue;
			}
			if (luw_discover_luajit(pid) <= 0) {
				uint64_t brk = r_brk(pid);

				if (brk)
					bp_set(&r, t, brk, r_brk_name);
				r.phase = PH_WAIT;
				cont(t, 0);
				continue;
			}
		} else {
			snprintf(l->entry, sizeof(l->entry), "%s", b->name);
			l->at_lua = 1;
			bp_clear(&r, t);
		}
		if (stop_all(&r, t, err, n)) {
			luw_launch_release(l);
			return -1;
		}
		return 0;
	}
}

void luw_launch_release(struct luw_launch *l)
{
	for (int i = 0; i < l->ntids; i++)
		ptrace(PTRACE_DETACH, l->tids[i], NULL,
		       (void *)(long)l->sig[i]);
	l->ntids = 0;
}
