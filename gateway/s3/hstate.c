/* Typed per-request handler state: the checked way from a request's
 * struct gw_hstate back to the handler's struct (hstate.h). */
#include "hstate.h"

#include <stdio.h>

#include "cn/rc.h"

void *gw_hstate_container(struct gw_hstate *hs, const struct gw_hstate_type *t, size_t off)
{
    if (hs == NULL)
        return NULL;
    if (hs->type != t) {
        char what[160];
        snprintf(what, sizeof(what), "request state is %s, not %s",
                 hs->type != NULL ? hs->type->name : "(untyped)", t->name);
        cn_assert_fail(what, __FILE__, __LINE__);
    }
    return (char *)hs - off;
}

void gw_hstate_free(struct gw_hstate *hs)
{
    if (hs != NULL)
        hs->type->free(hs);
}
