/*
 * Target with a known host stack: main -> rec x DEPTH -> leaf, spinning in
 * leaf forever.  Built -O2 -fno-omit-frame-pointer, with sibling calls and
 * inlining off, so every sample's frame-pointer chain is exactly
 * leaf, rec{DEPTH}, main.  Prints "ready" once the spin has started.
 *   deeprec DEPTH
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void leaf(void)
{
	puts("ready");
	fflush(stdout);
	for (;;)
		sink++;
}

__attribute__((noinline)) static int rec(int n)
{
	if (n <= 1)
		leaf();
	else
		rec(n - 1);
	/* Keeps the call from becoming a jump. */
	return (int)sink + n;
}

int main(int argc, char **argv)
{
	return rec(argc > 1 ? atoi(argv[1]) : 40);
}
