/* Typed per-request handler state (nginx's per-module request contexts):
 * each handler's state struct embeds a struct gw_hstate, named hs, whose
 * type names the struct and frees it. The request holds a struct gw_hstate
 * pointer (request.h), never a void *; GW_HSTATE() gets the struct back and
 * checks its type on the way, so a handler that finds another handler's
 * state stops with both names instead of reading the wrong memory. */
#ifndef GW_HSTATE_H
#define GW_HSTATE_H

#include <stddef.h>

struct gw_hstate;

/* One kind of handler state: one static const instance per struct, named
 * <struct tag>_hstate (GW_HSTATE() finds it by that name). */
struct gw_hstate_type {
    const char *name;                     /* the struct's name, for the failure */
    void (*free)(struct gw_hstate *hs);   /* frees the whole struct hs is in */
};

struct gw_hstate {
    const struct gw_hstate_type *type;
};

/* 1 when hs is of type t (NULL is of none). */
static inline int gw_hstate_is(const struct gw_hstate *hs, const struct gw_hstate_type *t)
{
    return hs != NULL && hs->type == t;
}

/* The struct that embeds hs at offset off, checked to be of type t; NULL
 * for NULL. A state of another type is a bug: the process stops
 * (CN_ASSERT's way, in every build) naming both types. */
void *gw_hstate_container(struct gw_hstate *hs, const struct gw_hstate_type *t, size_t off);

/* h_'s state as a struct T * (T a struct tag whose member hs is the
 * header, with its type T_hstate in scope), or NULL when h_ is NULL. */
#define GW_HSTATE(h_, T) \
    ((struct T *)gw_hstate_container((h_), &T##_hstate, offsetof(struct T, hs)))

/* Frees hs's whole state through its type. NULL is a no-op. */
void gw_hstate_free(struct gw_hstate *hs);

#endif
