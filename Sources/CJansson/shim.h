#ifndef SOCIALPIPE_CJANSSON_SHIM_H
#define SOCIALPIPE_CJANSSON_SHIM_H
#include <jansson.h>

/* json_incref is a static inline in jansson.h that Swift imports, but its
   name reads better next to a typed wrapper for the function-like macro. */
static inline int sp_json_type(const json_t *json) { return json ? (int)json->type : -1; }
#endif
