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

/* The index of the first byte of base[index..<count] that a JSON string
   must escape (below 0x20, `quote` or a backslash) or, when `non_ascii` is
   not 0, that is not ASCII; `count` when there is none. Sixteen bytes at a
   time with SSE2 (every x86-64 has it), then one by one. */
static inline long sp_next_escape(const unsigned char *base, long index, long count, unsigned char quote, int non_ascii) {
#if defined(__SSE2__)
    typedef unsigned char sp_bytes16 __attribute__((vector_size(16), aligned(1)));
    typedef char sp_mask16 __attribute__((vector_size(16)));
    const sp_bytes16 quotes = (sp_bytes16){0} + quote;
    const sp_bytes16 backslashes = (sp_bytes16){0} + 0x5C;
    const sp_bytes16 space = (sp_bytes16){0} + 0x20;
    while (index + 16 <= count) {
        sp_bytes16 bytes = *(const sp_bytes16 *)(base + index);
        sp_mask16 found = (sp_mask16)((bytes == quotes) | (bytes == backslashes) | (bytes < space));
        int bits = __builtin_ia32_pmovmskb128(found);
        /* A byte's high bit is what marks it as not ASCII. */
        if (non_ascii) bits |= __builtin_ia32_pmovmskb128((sp_mask16)bytes);
        if (bits != 0) return index + __builtin_ctz((unsigned)bits);
        index += 16;
    }
#endif
    while (index < count) {
        unsigned char byte = base[index];
        if (byte < 0x20 || byte == quote || byte == 0x5C || (non_ascii && byte >= 0x80)) return index;
        index += 1;
    }
    return count;
}

/* The index of the first byte of base[index..<count] that is not an ASCII
   digit, or `count`: sixteen bytes at a time with SSE2, then one by one. */
static inline long sp_digits_end(const unsigned char *base, long index, long count) {
#if defined(__SSE2__)
    typedef unsigned char sp_bytes16 __attribute__((vector_size(16), aligned(1)));
    typedef char sp_mask16 __attribute__((vector_size(16)));
    const sp_bytes16 zeros = (sp_bytes16){0} + 0x30;
    const sp_bytes16 nines = (sp_bytes16){0} + 0x39;
    while (index + 16 <= count) {
        sp_bytes16 bytes = *(const sp_bytes16 *)(base + index);
        int bits = __builtin_ia32_pmovmskb128((sp_mask16)((bytes < zeros) | (bytes > nines)));
        if (bits != 0) return index + __builtin_ctz((unsigned)bits);
        index += 16;
    }
#endif
    while (index < count && (unsigned char)(base[index] - 0x30) <= 9) index += 1;
    return index;
}

/* Whether every byte of base[index..<end] is an ASCII digit (an empty run
   is): sixteen bytes to a compare with SSE2, the last sixteen overlapping
   those before; a run of eight to fifteen in two overlapping words of eight,
   a shorter one byte by byte. Reads nothing outside the run. */
static inline int sp_all_digits(const unsigned char *base, long index, long end) {
    long length = end - index;
#if defined(__SSE2__)
    if (length >= 16) {
        typedef unsigned char sp_bytes16 __attribute__((vector_size(16), aligned(1)));
        typedef char sp_mask16 __attribute__((vector_size(16)));
        const sp_bytes16 zeros = (sp_bytes16){0} + 0x30;
        const sp_bytes16 nines = (sp_bytes16){0} + 0x39;
        int bad = 0;
        for (long position = index; position + 16 < end; position += 16) {
            sp_bytes16 bytes = *(const sp_bytes16 *)(base + position);
            bad |= __builtin_ia32_pmovmskb128((sp_mask16)((bytes < zeros) | (bytes > nines)));
        }
        sp_bytes16 last = *(const sp_bytes16 *)(base + end - 16);
        bad |= __builtin_ia32_pmovmskb128((sp_mask16)((last < zeros) | (last > nines)));
        return bad == 0;
    }
#endif
    if (length >= 8) {
        /* A byte is a digit when its high nibble is 3 and adding 6 to its low one carries nothing. */
        unsigned long long words[2];
        __builtin_memcpy(&words[0], base + index, 8);
        __builtin_memcpy(&words[1], base + end - 8, 8);
        unsigned long long bad = 0;
        for (int k = 0; k < 2; k++) {
            bad |= ((words[k] & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL)
                 | (((words[k] & 0x0F0F0F0F0F0F0F0FULL) + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL);
        }
        return bad == 0;
    }
    for (; index < end; index++) {
        if ((unsigned char)(base[index] - 0x30) > 9) return 0;
    }
    return 1;
}

/* The 64 bytes at `base` as bits, bit i set where base[i] is below 0x20, a
   quote, a backslash or, when `non_ascii` is not 0, 0x80 and above: the
   bytes where a run of plain string stops. */
static inline unsigned long long sp_stop_bits64(const unsigned char *base, int non_ascii) {
    unsigned long long bits = 0;
#if defined(__SSE2__)
    typedef unsigned char sp_bytes16 __attribute__((vector_size(16), aligned(1)));
    typedef char sp_mask16 __attribute__((vector_size(16)));
    const sp_bytes16 quotes = (sp_bytes16){0} + 0x22;
    const sp_bytes16 backslashes = (sp_bytes16){0} + 0x5C;
    const sp_bytes16 space = (sp_bytes16){0} + 0x20;
    for (int part = 0; part < 4; part++) {
        sp_bytes16 bytes = *(const sp_bytes16 *)(base + 16 * part);
        unsigned found = (unsigned)__builtin_ia32_pmovmskb128((sp_mask16)((bytes == quotes) | (bytes == backslashes) | (bytes < space)));
        if (non_ascii) found |= (unsigned)__builtin_ia32_pmovmskb128((sp_mask16)bytes);
        bits |= (unsigned long long)found << (16 * part);
    }
#else
    for (int i = 0; i < 64; i++) {
        unsigned char byte = base[i];
        if (byte < 0x20 || byte == 0x22 || byte == 0x5C || (non_ascii && byte >= 0x80)) bits |= 1ULL << i;
    }
#endif
    return bits;
}

/* O_PATH is a GNU extension the Swift Glibc module may not show. */
static const int sp_O_PATH = O_PATH;
#endif
