// SPDX-License-Identifier: GPL-2.0
/*
 * pg_planted_delay: a planted kernel regression for perfgate's kernel A/B
 * test (`perfgate ab SUITE --baseline-kernel K --candidate-kernel K
 * --candidate-module pg_planted_delay.ko`).
 *
 * Both sides boot the same kernel; the candidate also loads this module,
 * which makes one system call a few microseconds slower. The gate must fail
 * that candidate, and its evidence (on-CPU kernel stacks sampled with perf
 * events) must name this module's function, pg_planted_delay. That is how the
 * test knows the gate found the regression that was planted rather than
 * noise.
 *
 * The module puts a kprobe on `symbol` (by default __x64_sys_getppid, which
 * the smoke workload calls 16 times an iteration); the probe's handler spins
 * for `delay_us` microseconds in pg_planted_delay() before the system call
 * goes on. The spin is a loop of its own that reads the time stamp counter
 * inline, rather than a call to udelay(), so that a sample taken while it
 * runs has pg_planted_delay itself as the innermost kernel frame, not
 * delay_tsc or a clocksource's read function.
 *
 * delay_us can be changed while the module is loaded, through
 * /sys/module/pg_planted_delay/parameters/delay_us, which lets one boot
 * measure several delays.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compiler.h>
#include <linux/kprobes.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>
#include <linux/timekeeping.h>
#include <linux/timex.h>
#include <asm/processor.h>

static char *symbol = "__x64_sys_getppid";
module_param(symbol, charp, 0444);
MODULE_PARM_DESC(symbol, "the kernel function to slow down (default __x64_sys_getppid)");

static unsigned int delay_us = 5;
module_param(delay_us, uint, 0644);
MODULE_PARM_DESC(delay_us, "microseconds added to each call of symbol (default 5, at most 10000)");

/*
 * The handler runs with preemption off on the thread making the system call:
 * a delay much longer than this would stall RCU and trip the soft-lockup
 * detector (which the test VMs turn into a panic), so larger values are cut
 * down to it.
 */
#define PG_MAX_DELAY_US 10000u

/*
 * Spins for `us` microseconds without sleeping: kprobe handlers must not
 * sleep. noinline and noclone keep it a function of its own under exactly
 * this name (no pg_planted_delay.constprop.0), so that kallsyms, and with it
 * perfgate's kernel symbolizer, names the samples that land in it.
 */
static noinline __noclone void pg_planted_delay(unsigned int us)
{
#ifdef CONFIG_X86
	/*
	 * rdtsc, inline: the samples land in this loop. tsc_khz is the
	 * counter's rate as the kernel measured it at boot; without a TSC it
	 * is 0 and the clock below is used instead.
	 */
	if (tsc_khz) {
		u64 start = get_cycles();
		u64 cycles = (u64)us * tsc_khz / 1000;

		while (get_cycles() - start < cycles)
			cpu_relax();
		return;
	}
#endif
	{
		/* Elsewhere a clock that is safe to read from any context. */
		u64 start = ktime_get_mono_fast_ns();
		u64 ns = (u64)us * NSEC_PER_USEC;

		while (ktime_get_mono_fast_ns() - start < ns)
			cpu_relax();
	}
}

static int pg_planted_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned int us = min(READ_ONCE(delay_us), PG_MAX_DELAY_US);

	if (us)
		pg_planted_delay(us);
	return 0;
}

static struct kprobe pg_planted_kprobe = {
	.pre_handler = pg_planted_pre,
};

static int __init pg_planted_init(void)
{
	int err;

	if (delay_us > PG_MAX_DELAY_US) {
		pr_err("delay_us=%u is more than %u\n", delay_us, PG_MAX_DELAY_US);
		return -EINVAL;
	}
	pg_planted_kprobe.symbol_name = symbol;
	err = register_kprobe(&pg_planted_kprobe);
	if (err) {
		pr_err("cannot put a kprobe on %s: error %d\n", symbol, err);
		return err;
	}
	pr_info("adding %u us to every call of %s\n", delay_us, symbol);
	return 0;
}

static void __exit pg_planted_exit(void)
{
	unregister_kprobe(&pg_planted_kprobe);
}

module_init(pg_planted_init);
module_exit(pg_planted_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("perfgate's planted kernel regression: a busy-wait added to one system call");
