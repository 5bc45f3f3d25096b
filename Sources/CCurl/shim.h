#ifndef SOCIALPIPE_CCURL_SHIM_H
#define SOCIALPIPE_CCURL_SHIM_H
#include <curl/curl.h>

/* Every libcurl function the core calls is referenced weakly and only from
   the wrappers below, and the module map links nothing: a tool that never
   transfers (oauth-sign) does not load libcurl and its thirty dependencies
   at start-up. Tools that transfer link libcurl themselves (Package.swift). */
#pragma weak curl_global_init
#pragma weak curl_global_cleanup
#pragma weak curl_easy_init
#pragma weak curl_easy_cleanup
#pragma weak curl_easy_setopt
#pragma weak curl_easy_getinfo
#pragma weak curl_easy_strerror
#pragma weak curl_multi_init
#pragma weak curl_multi_cleanup
#pragma weak curl_multi_setopt
#pragma weak curl_multi_add_handle
#pragma weak curl_multi_remove_handle
#pragma weak curl_multi_perform
#pragma weak curl_multi_poll
#pragma weak curl_multi_info_read
#pragma weak curl_multi_timeout
#pragma weak curl_slist_append
#pragma weak curl_slist_free_all

/* Whether the tool was linked with libcurl: without it the weak references
   are null, and the core refuses to start instead of crashing. */
static inline int sp_curl_linked(void) { return curl_multi_init != 0 && curl_easy_init != 0; }
static inline CURLcode sp_global_init(long flags) { return curl_global_init(flags); }
static inline void sp_global_cleanup(void) { curl_global_cleanup(); }
static inline CURL *sp_easy_init(void) { return curl_easy_init(); }
static inline void sp_easy_cleanup(CURL *h) { curl_easy_cleanup(h); }
static inline const char *sp_easy_strerror(CURLcode c) { return curl_easy_strerror(c); }
static inline CURLM *sp_multi_init(void) { return curl_multi_init(); }
static inline CURLMcode sp_multi_cleanup(CURLM *m) { return curl_multi_cleanup(m); }
static inline CURLMcode sp_multi_add_handle(CURLM *m, CURL *h) { return curl_multi_add_handle(m, h); }
static inline CURLMcode sp_multi_remove_handle(CURLM *m, CURL *h) { return curl_multi_remove_handle(m, h); }
static inline CURLMcode sp_multi_perform(CURLM *m, int *running) { return curl_multi_perform(m, running); }
static inline CURLMcode sp_multi_poll(CURLM *m, struct curl_waitfd *fds, unsigned int n, int timeout, int *ret) {
    return curl_multi_poll(m, fds, n, timeout, ret);
}
static inline CURLMsg *sp_multi_info_read(CURLM *m, int *queued) { return curl_multi_info_read(m, queued); }
static inline CURLMcode sp_multi_timeout(CURLM *m, long *timeout) { return curl_multi_timeout(m, timeout); }
static inline struct curl_slist *sp_slist_append(struct curl_slist *list, const char *line) { return curl_slist_append(list, line); }
static inline void sp_slist_free_all(struct curl_slist *list) { curl_slist_free_all(list); }

/* curl_easy_setopt, curl_multi_setopt and curl_easy_getinfo are variadic and
   do not import into Swift; these typed wrappers do, and curl's gcc
   type-check macros still check each body. Pass Swift Int for long. */
static inline CURLcode sp_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sp_easy_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sp_easy_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sp_easy_setopt_offset(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sp_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sp_easy_setopt_write_callback(CURL *h, CURLoption o, curl_write_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sp_easy_setopt_read_callback(CURL *h, CURLoption o, curl_read_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sp_easy_setopt_seek_callback(CURL *h, CURLoption o, curl_seek_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sp_easy_setopt_prereq_callback(CURL *h, CURLoption o, curl_prereq_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode sp_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode sp_easy_getinfo_pointer(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode sp_easy_getinfo_offset(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLMcode sp_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
#endif
