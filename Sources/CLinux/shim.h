#ifndef SOCIALPIPE_CLINUX_SHIM_H
#define SOCIALPIPE_CLINUX_SHIM_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <malloc.h>
#include <sys/prctl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Linux calls that glibc 2.36 either lacks a wrapper for (openat2) or
   declares variadic (syscall, prctl), which Swift cannot call. Each returns
   what the call does: -1 with errno set on failure. */

/* openat2(2), Linux 5.6: opens `path` below the directory `dirfd` as the
   RESOLVE_* bits of `resolve` allow. ENOSYS where the kernel (or the headers
   built against) predate it; the caller then walks the path itself. */
static inline int sp_openat2(int dirfd, const char *path, unsigned long long flags, unsigned long long resolve) {
#ifdef SYS_openat2
    struct open_how how = { .flags = flags, .mode = 0, .resolve = resolve };
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
#else
    (void)dirfd; (void)path; (void)flags; (void)resolve;
    errno = ENOSYS;
    return -1;
#endif
}

/* prctl(PR_SET_DUMPABLE): 0 leaves no core file behind a crash and keeps
   other processes of the same user from reading this one's memory. */
static inline int sp_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL);
}

/* memmem(3), a GNU extension: glibc's search is linear in the haystack
   whatever the needle, where memchr on its first byte and a compare at each
   hit is quadratic in the worst case and slow on text full of that byte. */
static inline const void *sp_memmem(const void *haystack, size_t length, const void *needle, size_t needleLength) {
    return memmem(haystack, length, needle, needleLength);
}

/* getrandom(2), Linux 3.17: `length` bytes from the kernel's CSPRNG. Made
   through syscall(2): <sys/random.h> would bring in <sys/types.h> under
   _GNU_SOURCE, whose fd_set then differs from the one CCurl's module sees,
   and a clean build refuses the two modules together. */
static inline long sp_getrandom(void *buffer, size_t length) {
    return syscall(SYS_getrandom, buffer, length, 0U);
}

/* mallopt(3): allocations below `mmap_threshold` bytes come from the heap
   rather than a mapping of their own, and the heap's top is given back to
   the kernel only past `trim_threshold` free bytes. */
static inline void sp_set_heap_thresholds(int mmap_threshold, int trim_threshold) {
    mallopt(M_MMAP_THRESHOLD, mmap_threshold);
    mallopt(M_TRIM_THRESHOLD, trim_threshold);
}

/* The byte scans of JSON text (JSONScan, RawJSON), sixteen bytes to a
   compare with SSE2 (every x86-64 has it); one byte at a time elsewhere and
   for what is left past the last sixteen. None reads outside its range. */
#if defined(__SSE2__)
/* Sixteen bytes, loaded from any address; and what a compare of them gives. */
typedef unsigned char sp_bytes16 __attribute__((vector_size(16), aligned(1)));
typedef char sp_mask16 __attribute__((vector_size(16)));

/* Bit i set where bytes[i] stops a plain string's run (see sp_is_stop). */
static inline unsigned sp_stops16(sp_bytes16 bytes, unsigned char quote, int non_ascii) {
    sp_mask16 found = (sp_mask16)((bytes == (sp_bytes16){0} + quote) | (bytes == (sp_bytes16){0} + 0x5C)
                                  | (bytes < (sp_bytes16){0} + 0x20));
    unsigned bits = (unsigned)__builtin_ia32_pmovmskb128(found);
    /* A byte's high bit is what marks it as not ASCII. */
    return non_ascii ? bits | (unsigned)__builtin_ia32_pmovmskb128((sp_mask16)bytes) : bits;
}

/* Bit i set where bytes[i] is not an ASCII digit. */
static inline unsigned sp_non_digits16(sp_bytes16 bytes) {
    return (unsigned)__builtin_ia32_pmovmskb128((sp_mask16)((bytes < (sp_bytes16){0} + 0x30) | (bytes > (sp_bytes16){0} + 0x39)));
}
#endif

/* Whether `byte` stops a plain run of a string quoted with `quote`: a byte a
   JSON string must escape (below 0x20, the quote, a backslash) or, when
   `non_ascii` is not 0, one of 0x80 and above. */
static inline int sp_is_stop(unsigned char byte, unsigned char quote, int non_ascii) {
    return byte < 0x20 || byte == quote || byte == 0x5C || (non_ascii && byte >= 0x80);
}

/* The index of the first byte of base[index..<count] that stops a plain run
   (sp_is_stop), or `count`. */
static inline long sp_next_escape(const unsigned char *base, long index, long count, unsigned char quote, int non_ascii) {
#if defined(__SSE2__)
    for (; index + 16 <= count; index += 16) {
        unsigned bits = sp_stops16(*(const sp_bytes16 *)(base + index), quote, non_ascii);
        if (bits != 0) return index + __builtin_ctz(bits);
    }
#endif
    while (index < count && !sp_is_stop(base[index], quote, non_ascii)) index += 1;
    return index;
}

/* The `length` bytes at `base` (at most 64) as bits, bit i set where
   base[i] stops a plain run of a string quoted with `"` (sp_is_stop). */
static inline unsigned long long sp_stop_bits(const unsigned char *base, long length, int non_ascii) {
    unsigned long long bits = 0;
#if defined(__SSE2__)
    if (length == 64) {
        for (int part = 0; part < 4; part++) {
            bits |= (unsigned long long)sp_stops16(*(const sp_bytes16 *)(base + 16 * part), 0x22, non_ascii) << (16 * part);
        }
        return bits;
    }
#endif
    for (long i = 0; i < length; i++) {
        if (sp_is_stop(base[i], 0x22, non_ascii)) bits |= 1ULL << i;
    }
    return bits;
}

/* The index of the first byte of base[index..<count] that is not an ASCII
   digit, or `count`. */
static inline long sp_digits_end(const unsigned char *base, long index, long count) {
#if defined(__SSE2__)
    for (; index + 16 <= count; index += 16) {
        unsigned bits = sp_non_digits16(*(const sp_bytes16 *)(base + index));
        if (bits != 0) return index + __builtin_ctz(bits);
    }
#endif
    while (index < count && (unsigned char)(base[index] - 0x30) <= 9) index += 1;
    return index;
}

/* Whether every byte of base[index..<end] is an ASCII digit (an empty run
   is): with SSE2 a run of sixteen or more in compares of sixteen, the last
   overlapping those before. A run of eight to fifteen in two overlapping
   words of eight (a byte is a digit when its high nibble is 3 and adding 6
   to its low one carries nothing); a shorter one byte by byte. */
static inline int sp_all_digits(const unsigned char *base, long index, long end) {
    long length = end - index;
#if defined(__SSE2__)
    if (length >= 16) {
        unsigned bad = 0;
        for (long position = index; position + 16 < end; position += 16) bad |= sp_non_digits16(*(const sp_bytes16 *)(base + position));
        return (bad | sp_non_digits16(*(const sp_bytes16 *)(base + end - 16))) == 0;
    }
#endif
    if (length >= 8) {
        unsigned long long words[2], bad = 0;
        __builtin_memcpy(&words[0], base + index, 8);
        __builtin_memcpy(&words[1], base + end - 8, 8);
        for (int k = 0; k < 2; k++) {
            bad |= ((words[k] & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL)
                 | (((words[k] & 0x0F0F0F0F0F0F0F0FULL) + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL);
        }
        return bad == 0;
    }
    return sp_digits_end(base, index, end) == end;
}

/* O_PATH is a GNU extension the Swift Glibc module may not show. */
static const int sp_O_PATH = O_PATH;
#endif
