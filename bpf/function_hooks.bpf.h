/* The fentry/fexit and kprobe/kretprobe programs of a hook on a kernel
 * function (gate/probes/hooks.h: TracepointHook with functions): one macro
 * writes both, <prefix>_fentry and <prefix>_kprobe, around one body, the
 * same static __always_inline function the hook's tracepoint variants call.
 * The sections name no function: the plan sets the target at load time, the
 * first of the hook's candidate functions that this kernel has.
 *
 * A kprobe's arguments are untyped: bodies read through pointers with
 * BPF_CORE_READ, which suits both. */
#ifndef PERFGATE_FUNCTION_HOOKS_BPF_H
#define PERFGATE_FUNCTION_HOOKS_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* At the function's entry, with its leading arguments `args`. */
#define PG_FUNCTION_ENTRY_HOOK(prefix, body, args...)   \
	SEC("fentry")                                   \
	int BPF_PROG(prefix##_fentry, ##args)           \
	{                                               \
		body;                                   \
		return 0;                               \
	}                                               \
	SEC("kprobe")                                   \
	int BPF_KPROBE(prefix##_kprobe, ##args)         \
	{                                               \
		body;                                   \
		return 0;                               \
	}

/* At the function's return, without its arguments (a kretprobe has none). */
#define PG_FUNCTION_RETURN_HOOK(prefix, body)           \
	SEC("fexit")                                    \
	int BPF_PROG(prefix##_fentry)                   \
	{                                               \
		body;                                   \
		return 0;                               \
	}                                               \
	SEC("kretprobe")                                \
	int BPF_KRETPROBE(prefix##_kprobe)              \
	{                                               \
		body;                                   \
		return 0;                               \
	}

/* At the function's return, with its return value as `__u64 ret`; the
 * candidate functions' arguments may differ between kernel versions. */
#define PG_FUNCTION_RESULT_HOOK(prefix, body)           \
	SEC("fexit")                                    \
	int BPF_PROG(prefix##_fentry)                   \
	{                                               \
		__u64 ret = 0;                          \
		bpf_get_func_ret(ctx, &ret);            \
		body;                                   \
		return 0;                               \
	}                                               \
	SEC("kretprobe")                                \
	int BPF_KRETPROBE(prefix##_kprobe)              \
	{                                               \
		__u64 ret = PT_REGS_RC(ctx);            \
		body;                                   \
		return 0;                               \
	}

#endif
