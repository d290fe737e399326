/*
 * Target for the host unwinder tests: a function gcc realigns through a
 * DRAP register, called from frame-pointer-less callers.  A 64-byte
 * aligned local and a variable-length array make gcc at -O2 open
 * realigned() with
 *   lea 8(%rsp),%r10; and $-64,%rsp; push -8(%r10); push %rbp;
 *   mov %rsp,%rbp; push %r14; push %r13; push %r12; push %r10; ...
 * and describe its body with CFA = DW_OP_breg6 (rbp) -32; DW_OP_deref and
 * rbp saved at DW_OP_breg6 (rbp) 0 (test_cfi_unwind_c.sh checks that it
 * still does; the offset grows with the registers pushed after rbp).  Its callers outer_a and outer_b keep rsp-based frames
 * with locals, so an sp off by the alignment padding reads no return
 * address in them.  realigned() is entered once and never returns: probes
 * land in its body or in the leaf it calls, never in its prologue or
 * epilogue, whose rows (a CFA in r10) no table rule expresses.
 *
 * usage: realign [THREADS]   runs forever in main and THREADS threads.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINL __attribute__((noinline, noclone))

volatile unsigned long sink;
volatile int stop;		/* never set: realigned() keeps its epilogue */

NOINL unsigned long leaf_spin(volatile char *p, int n)
{
	unsigned long s = 0;

	for (int i = 0; i < n; i++)
		s += (unsigned long)p[i & 63] * sink;
	return s;
}

NOINL unsigned long realigned(int n)
{
	_Alignas(64) volatile char buf[64];
	volatile char vla[n + 1];
	unsigned long a = sink, b = sink * 3, c = sink * 5, d = sink * 7;

	for (unsigned int i = 0; !stop; i++) {
		buf[i & 63] = (char)i;
		vla[i % (unsigned int)n] = (char)a;
		/* Half the time here, half in the leaf. */
		for (int k = 0; k < 2000; k++) {
			a += (unsigned long)buf[k & 63] * sink;
			b ^= a;
		}
		a += leaf_spin(buf, 2000);
		c += b;
		d ^= c + (unsigned long)vla[i % (unsigned int)n];
		sink += d;
	}
	return a + b + c + d;
}

NOINL unsigned long outer_b(int n)
{
	volatile unsigned long pad[8];

	pad[n & 7] = sink;
	return realigned(n) + pad[n & 7];
}

NOINL unsigned long outer_a(int n)
{
	volatile unsigned long pad[6];

	pad[n % 6] = sink;
	return outer_b(n + 1) + pad[n % 6];
}

static void *thread_main(void *arg)
{
	(void)arg;
	sink += outer_a(40);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 0;

	for (int i = 0; i < threads; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, thread_main, NULL)) {
			perror("pthread_create");
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	sink += outer_a(30);
	return 0;
}
