/* Per-thread metric shards merged into Prometheus text (see cn/metrics.h).
 * Every series owns a run of 64-bit slots: one for a counter or gauge,
 * n_bounds + 1 bucket counts and a sum for a histogram. Each recording
 * thread gets a cache-line-aligned copy of all slots (its shard); it alone
 * writes them, with relaxed atomic load + store (no locked instruction), and
 * a scrape reads them with relaxed loads. A value is set + retired (shards of
 * threads that exited) + the live shards. */
#include "cn/metrics.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cn/alloc.h"
#include "cn/rc.h"

#define CN_METRICS_LINE 64
#define CN_METRICS_MAX_COLLECT 8

struct cn_metrics_family {
    char *name, *help;
    enum cn_metric_type type;
    int unit_exp;
    uint64_t bounds[CN_METRICS_MAX_BOUNDS];
    uint32_t n_bounds;
    uint32_t first, last;         /* series of the family, linked by next */
};

struct cn_metrics_series {
    uint32_t family;
    uint32_t slot;                /* first slot */
    uint32_t next;                /* next series of the family; UINT32_MAX ends */
    char *labels;                 /* rendered and escaped: a="x",b="y"; "" for none */
    int hidden;                   /* left out of the page (cn_metrics_hide) */
};

struct cn_metrics_shard {
    struct cn_metrics *m;
    struct cn_metrics_shard *prev, *next;
    void *base;                   /* what was allocated (slots is aligned into it) */
    _Atomic uint64_t *slots;
};

struct cn_metrics {
    struct cn_metrics_family *fams;
    uint32_t n_fams, cap_fams;
    struct cn_metrics_series *series;
    uint32_t n_series, cap_series;
    uint32_t n_slots;
    atomic_int frozen;            /* set on first recording: no more registration */
    pthread_mutex_t lock;         /* shards list, retired, freezing */
    pthread_mutex_t render_lock;  /* one render at a time */
    pthread_key_t key;            /* this thread's shard */
    struct cn_metrics_shard *shards;
    _Atomic uint64_t *retired;    /* n_slots: sums of the shards of exited threads */
    _Atomic uint64_t *set;        /* n_slots: values given by cn_metrics_set */
    struct {
        cn_metrics_collect_cb cb;
        void *arg;
    } collect[CN_METRICS_MAX_COLLECT];
    uint32_t n_collect;
};

/* ---- shards ---- */

static void cn_metrics_slots_add(_Atomic uint64_t *dst, _Atomic uint64_t *src, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        atomic_fetch_add_explicit(&dst[i], atomic_load_explicit(&src[i], memory_order_relaxed),
                                  memory_order_relaxed);
}

static void cn_metrics_shard_free(struct cn_metrics_shard *sh)
{
    cn_free(sh->base);
    cn_free(sh);
}

/* The pthread key's destructor: a thread exits, its counts move to retired. */
static void cn_metrics_shard_retire(void *arg)
{
    struct cn_metrics_shard *sh = arg;
    struct cn_metrics *m = sh->m;
    pthread_mutex_lock(&m->lock);
    cn_metrics_slots_add(m->retired, sh->slots, m->n_slots);
    if (sh->prev)
        sh->prev->next = sh->next;
    else
        m->shards = sh->next;
    if (sh->next)
        sh->next->prev = sh->prev;
    pthread_mutex_unlock(&m->lock);
    cn_metrics_shard_free(sh);
}

/* Slots zeroed and starting on a cache line of their own, so that two
 * threads' shards never share a line. */
static _Atomic uint64_t *cn_metrics_slots_new(uint32_t n, void **base)
{
    size_t bytes = ((size_t)n * sizeof(uint64_t) + CN_METRICS_LINE - 1) & ~(size_t)(CN_METRICS_LINE - 1);
    *base = cn_calloc(1, bytes + CN_METRICS_LINE);
    uintptr_t p = ((uintptr_t)*base + CN_METRICS_LINE - 1) & ~(uintptr_t)(CN_METRICS_LINE - 1);
    return (_Atomic uint64_t *)p;
}

/* Ends registration (once): the registry-wide slot arrays are made. */
static void cn_metrics_freeze(struct cn_metrics *m)
{
    if (atomic_load_explicit(&m->frozen, memory_order_acquire))
        return;
    pthread_mutex_lock(&m->lock);
    if (!atomic_load_explicit(&m->frozen, memory_order_relaxed)) {
        m->retired = cn_calloc(m->n_slots + 1, sizeof(uint64_t));
        m->set = cn_calloc(m->n_slots + 1, sizeof(uint64_t));
        atomic_store_explicit(&m->frozen, 1, memory_order_release);
    }
    pthread_mutex_unlock(&m->lock);
}

static struct cn_metrics_shard *cn_metrics_shard_new(struct cn_metrics *m)
{
    cn_metrics_freeze(m);
    struct cn_metrics_shard *sh = cn_calloc(1, sizeof(*sh));
    sh->m = m;
    sh->slots = cn_metrics_slots_new(m->n_slots + 1, &sh->base);
    pthread_mutex_lock(&m->lock);
    sh->next = m->shards;
    if (m->shards)
        m->shards->prev = sh;
    m->shards = sh;
    pthread_mutex_unlock(&m->lock);
    CN_ASSERT(pthread_setspecific(m->key, sh) == 0);
    return sh;
}

/* This thread's slots (made on first use). */
static inline _Atomic uint64_t *cn_metrics_my_slots(struct cn_metrics *m)
{
    struct cn_metrics_shard *sh = pthread_getspecific(m->key);
    if (sh == NULL)
        sh = cn_metrics_shard_new(m);
    return sh->slots;
}

/* Single writer: a relaxed load and store, no read-modify-write. */
static inline void cn_metrics_bump(_Atomic uint64_t *p, uint64_t n)
{
    atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* ---- registry ---- */

struct cn_metrics *cn_metrics_new(void)
{
    struct cn_metrics *m = cn_calloc(1, sizeof(*m));
    pthread_mutex_init(&m->lock, NULL);
    pthread_mutex_init(&m->render_lock, NULL);
    CN_ASSERT(pthread_key_create(&m->key, cn_metrics_shard_retire) == 0);
    return m;
}

void cn_metrics_free(struct cn_metrics *m)
{
    if (m == NULL)
        return;
    /* after this no thread's exit runs the destructor on this registry */
    pthread_key_delete(m->key);
    for (struct cn_metrics_shard *sh = m->shards, *next; sh != NULL; sh = next) {
        next = sh->next;
        cn_metrics_shard_free(sh);
    }
    for (uint32_t i = 0; i < m->n_fams; i++) {
        cn_free(m->fams[i].name);
        cn_free(m->fams[i].help);
    }
    for (uint32_t i = 0; i < m->n_series; i++)
        cn_free(m->series[i].labels);
    cn_free(m->fams);
    cn_free(m->series);
    cn_free(m->retired);
    cn_free(m->set);
    pthread_mutex_destroy(&m->lock);
    pthread_mutex_destroy(&m->render_lock);
    cn_free(m);
}

/* ---- a growing output buffer ---- */

struct cn_metrics_buf {
    char *p;
    size_t len, cap;
};

static void cn_metrics_buf_reserve(struct cn_metrics_buf *b, size_t n)
{
    if (b->len + n + 1 <= b->cap)
        return;
    while (b->len + n + 1 > b->cap)
        b->cap = b->cap ? b->cap * 2 : 4096;
    b->p = cn_realloc(b->p, b->cap);
}

static void cn_metrics_buf_put(struct cn_metrics_buf *b, const char *s, size_t n)
{
    cn_metrics_buf_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void cn_metrics_buf_str(struct cn_metrics_buf *b, const char *s)
{
    cn_metrics_buf_put(b, s, strlen(s));
}

/* Appends s with \ and newline escaped, and " too when quote is set (label
 * values; HELP text leaves quotes alone). */
static void cn_metrics_buf_escaped(struct cn_metrics_buf *b, const char *s, int quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            cn_metrics_buf_put(b, "\\\\", 2);
        else if (*s == '\n')
            cn_metrics_buf_put(b, "\\n", 2);
        else if (*s == '"' && quote)
            cn_metrics_buf_put(b, "\\\"", 2);
        else
            cn_metrics_buf_put(b, s, 1);
    }
}

/* Appends v * 10^unit_exp exactly: integer part, then the fraction without
 * trailing zeros ("0.00025", "3", "1.5"). */
static void cn_metrics_buf_scaled(struct cn_metrics_buf *b, uint64_t v, int negative, int unit_exp)
{
    char s[48];
    uint64_t div = 1;
    for (int i = 0; i < -unit_exp; i++)
        div *= 10;
    int n = snprintf(s, sizeof(s), "%s%" PRIu64, negative ? "-" : "", v / div);
    uint64_t frac = v % div;
    if (frac != 0) {
        int digits = -unit_exp;
        while (frac % 10 == 0) {
            frac /= 10;
            digits--;
        }
        snprintf(s + n, sizeof(s) - (size_t)n, ".%0*" PRIu64, digits, frac);
    }
    cn_metrics_buf_str(b, s);
}

/* ---- registration ---- */

static int cn_metrics_name_ok(const char *s, int colon)
{
    if (s == NULL || *s == '\0' || (*s >= '0' && *s <= '9'))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '_' || (colon && *s == ':')))
            return 0;
    return 1;
}

/* The family called name, made from the arguments if it is new. */
static uint32_t cn_metrics_family_get(struct cn_metrics *m, const char *name, const char *help,
                                      enum cn_metric_type type, int unit_exp,
                                      const uint64_t *bounds, uint32_t n_bounds)
{
    CN_ASSERT(cn_metrics_name_ok(name, 1) && help != NULL);
    CN_ASSERT(unit_exp <= 0 && unit_exp >= -9 && n_bounds <= CN_METRICS_MAX_BOUNDS);
    for (uint32_t i = 0; i < m->n_fams; i++) {
        struct cn_metrics_family *f = &m->fams[i];
        if (strcmp(f->name, name) != 0)
            continue;
        CN_ASSERT(f->type == type && f->unit_exp == unit_exp && f->n_bounds == n_bounds);
        CN_ASSERT(n_bounds == 0 || memcmp(f->bounds, bounds, n_bounds * sizeof(*bounds)) == 0);
        return i;
    }
    if (m->n_fams == m->cap_fams) {
        m->cap_fams = m->cap_fams ? 2 * m->cap_fams : 16;
        m->fams = cn_realloc(m->fams, m->cap_fams * sizeof(*m->fams));
    }
    struct cn_metrics_family *f = &m->fams[m->n_fams];
    memset(f, 0, sizeof(*f));
    f->name = cn_strdup(name);
    f->help = cn_strdup(help);
    f->type = type;
    f->unit_exp = unit_exp;
    f->first = f->last = UINT32_MAX;
    for (uint32_t i = 0; i < n_bounds; i++) {
        CN_ASSERT(i == 0 || bounds[i] > bounds[i - 1]);
        f->bounds[i] = bounds[i];
    }
    f->n_bounds = n_bounds;
    return m->n_fams++;
}

/* Renders the label pairs once, at registration. */
static char *cn_metrics_labels_render(const char *const *labels, enum cn_metric_type type)
{
    struct cn_metrics_buf b = {0};
    cn_metrics_buf_reserve(&b, 0);
    b.p[0] = '\0';
    for (size_t i = 0; labels != NULL && labels[i] != NULL; i += 2) {
        CN_ASSERT(labels[i + 1] != NULL && cn_metrics_name_ok(labels[i], 0));
        CN_ASSERT(strncmp(labels[i], "__", 2) != 0);
        CN_ASSERT(type != CN_METRIC_HISTOGRAM || strcmp(labels[i], "le") != 0);
        if (i > 0)
            cn_metrics_buf_str(&b, ",");
        cn_metrics_buf_str(&b, labels[i]);
        cn_metrics_buf_str(&b, "=\"");
        cn_metrics_buf_escaped(&b, labels[i + 1], 1);
        cn_metrics_buf_str(&b, "\"");
    }
    return b.p;
}

static uint32_t cn_metrics_register(struct cn_metrics *m, const char *name, const char *help,
                                    enum cn_metric_type type, int unit_exp,
                                    const char *const *labels, const uint64_t *bounds,
                                    uint32_t n_bounds)
{
    CN_ASSERT(!atomic_load(&m->frozen) && "metrics registered after recording started");
    uint32_t fi = cn_metrics_family_get(m, name, help, type, unit_exp, bounds, n_bounds);
    char *rendered = cn_metrics_labels_render(labels, type);
    struct cn_metrics_family *f = &m->fams[fi];
    for (uint32_t s = f->first; s != UINT32_MAX; s = m->series[s].next)
        CN_ASSERT(strcmp(m->series[s].labels, rendered) != 0 && "series registered twice");
    if (m->n_series == m->cap_series) {
        m->cap_series = m->cap_series ? 2 * m->cap_series : 64;
        m->series = cn_realloc(m->series, m->cap_series * sizeof(*m->series));
    }
    uint32_t id = m->n_series++;
    m->series[id] = (struct cn_metrics_series){fi, m->n_slots, UINT32_MAX, rendered, 0};
    m->n_slots += type == CN_METRIC_HISTOGRAM ? n_bounds + 2 : 1;
    if (f->last == UINT32_MAX)
        f->first = id;
    else
        m->series[f->last].next = id;
    f->last = id;
    return id;
}

uint32_t cn_metrics_counter(struct cn_metrics *m, const char *name, const char *help,
                            int unit_exp, const char *const *labels)
{
    return cn_metrics_register(m, name, help, CN_METRIC_COUNTER, unit_exp, labels, NULL, 0);
}

uint32_t cn_metrics_gauge(struct cn_metrics *m, const char *name, const char *help,
                          int unit_exp, const char *const *labels)
{
    return cn_metrics_register(m, name, help, CN_METRIC_GAUGE, unit_exp, labels, NULL, 0);
}

uint32_t cn_metrics_histogram(struct cn_metrics *m, const char *name, const char *help,
                              int unit_exp, const char *const *labels, const uint64_t *bounds,
                              uint32_t n_bounds)
{
    return cn_metrics_register(m, name, help, CN_METRIC_HISTOGRAM, unit_exp, labels, bounds,
                               n_bounds);
}

void cn_metrics_hide(struct cn_metrics *m, uint32_t id)
{
    CN_ASSERT(id < m->n_series);
    pthread_mutex_lock(&m->lock);
    m->series[id].hidden = 1;
    pthread_mutex_unlock(&m->lock);
}

void cn_metrics_show(struct cn_metrics *m, uint32_t id, const char *const *labels)
{
    CN_ASSERT(id < m->n_series);
    const struct cn_metrics_family *f = &m->fams[m->series[id].family];
    char *rendered = labels != NULL ? cn_metrics_labels_render(labels, f->type) : NULL;
    pthread_mutex_lock(&m->lock);   /* a render reads labels under it */
    struct cn_metrics_series *s = &m->series[id];
    char *old = NULL;
    if (rendered != NULL) {
        old = s->labels;
        s->labels = rendered;
    }
    s->hidden = 0;
    pthread_mutex_unlock(&m->lock);
    cn_free(old);
}

void cn_metrics_on_collect(struct cn_metrics *m, cn_metrics_collect_cb cb, void *arg)
{
    CN_ASSERT(m->n_collect < CN_METRICS_MAX_COLLECT && !atomic_load(&m->frozen));
    m->collect[m->n_collect].cb = cb;
    m->collect[m->n_collect++].arg = arg;
}

/* ---- recording ---- */

void cn_metrics_add(struct cn_metrics *m, uint32_t id, uint64_t n)
{
    _Atomic uint64_t *slots = cn_metrics_my_slots(m);
    cn_metrics_bump(&slots[m->series[id].slot], n);
}

void cn_metrics_sub(struct cn_metrics *m, uint32_t id, uint64_t n)
{
    cn_metrics_add(m, id, 0 - n);   /* unsigned wrap-around; summed as int64 */
}

void cn_metrics_observe(struct cn_metrics *m, uint32_t id, uint64_t value)
{
    _Atomic uint64_t *slots = cn_metrics_my_slots(m);
    const struct cn_metrics_series *s = &m->series[id];
    const struct cn_metrics_family *f = &m->fams[s->family];
    uint32_t b = 0;
    while (b < f->n_bounds && value > f->bounds[b])
        b++;
    cn_metrics_bump(&slots[s->slot + b], 1);
    cn_metrics_bump(&slots[s->slot + f->n_bounds + 1], value);
}

void cn_metrics_set(struct cn_metrics *m, uint32_t id, int64_t value)
{
    cn_metrics_freeze(m);
    atomic_store_explicit(&m->set[m->series[id].slot], (uint64_t)value, memory_order_relaxed);
}

/* ---- scraping ---- */

/* The merged value of one slot. Caller holds m->lock (shards stay put). */
static uint64_t cn_metrics_slot_locked(struct cn_metrics *m, uint32_t slot)
{
    uint64_t v = atomic_load_explicit(&m->set[slot], memory_order_relaxed) +
                 atomic_load_explicit(&m->retired[slot], memory_order_relaxed);
    for (struct cn_metrics_shard *sh = m->shards; sh != NULL; sh = sh->next)
        v += atomic_load_explicit(&sh->slots[slot], memory_order_relaxed);
    return v;
}

int64_t cn_metrics_value(struct cn_metrics *m, uint32_t id)
{
    cn_metrics_freeze(m);
    const struct cn_metrics_series *s = &m->series[id];
    const struct cn_metrics_family *f = &m->fams[s->family];
    uint64_t v = 0;
    pthread_mutex_lock(&m->lock);
    if (f->type == CN_METRIC_HISTOGRAM)
        for (uint32_t b = 0; b <= f->n_bounds; b++)
            v += cn_metrics_slot_locked(m, s->slot + b);
    else
        v = cn_metrics_slot_locked(m, s->slot);
    pthread_mutex_unlock(&m->lock);
    return (int64_t)v;
}

/* name[suffix]{labels[,extra]} */
static void cn_metrics_render_head(struct cn_metrics_buf *b, const char *name, const char *suffix,
                                   const char *labels, const char *extra)
{
    cn_metrics_buf_str(b, name);
    cn_metrics_buf_str(b, suffix);
    if (labels[0] == '\0' && extra == NULL)
        return;
    cn_metrics_buf_str(b, "{");
    cn_metrics_buf_str(b, labels);
    if (extra != NULL) {
        if (labels[0] != '\0')
            cn_metrics_buf_str(b, ",");
        cn_metrics_buf_str(b, extra);
    }
    cn_metrics_buf_str(b, "}");
}

static void cn_metrics_render_histogram_locked(struct cn_metrics *m, struct cn_metrics_buf *b,
                                               const struct cn_metrics_family *f,
                                               const struct cn_metrics_series *s)
{
    uint64_t cum = 0;
    for (uint32_t i = 0; i <= f->n_bounds; i++) {
        struct cn_metrics_buf le = {0};
        cn_metrics_buf_str(&le, "le=\"");
        if (i < f->n_bounds)
            cn_metrics_buf_scaled(&le, f->bounds[i], 0, f->unit_exp);
        else
            cn_metrics_buf_str(&le, "+Inf");
        cn_metrics_buf_str(&le, "\"");
        cum += cn_metrics_slot_locked(m, s->slot + i);
        cn_metrics_render_head(b, f->name, "_bucket", s->labels, le.p);
        cn_free(le.p);
        char num[32];
        snprintf(num, sizeof(num), " %" PRIu64 "\n", cum);
        cn_metrics_buf_str(b, num);
    }
    cn_metrics_render_head(b, f->name, "_sum", s->labels, NULL);
    cn_metrics_buf_str(b, " ");
    cn_metrics_buf_scaled(b, cn_metrics_slot_locked(m, s->slot + f->n_bounds + 1), 0,
                          f->unit_exp);
    cn_metrics_buf_str(b, "\n");
    cn_metrics_render_head(b, f->name, "_count", s->labels, NULL);
    char num[32];
    snprintf(num, sizeof(num), " %" PRIu64 "\n", cum);
    cn_metrics_buf_str(b, num);
}

static void cn_metrics_render_family_locked(struct cn_metrics *m, struct cn_metrics_buf *b,
                                            const struct cn_metrics_family *f)
{
    static const char *const types[] = {"counter", "gauge", "histogram"};
    cn_metrics_buf_str(b, "# HELP ");
    cn_metrics_buf_str(b, f->name);
    cn_metrics_buf_str(b, " ");
    cn_metrics_buf_escaped(b, f->help, 0);
    cn_metrics_buf_str(b, "\n# TYPE ");
    cn_metrics_buf_str(b, f->name);
    cn_metrics_buf_str(b, " ");
    cn_metrics_buf_str(b, types[f->type]);
    cn_metrics_buf_str(b, "\n");
    for (uint32_t id = f->first; id != UINT32_MAX; id = m->series[id].next) {
        const struct cn_metrics_series *s = &m->series[id];
        if (s->hidden)
            continue;
        if (f->type == CN_METRIC_HISTOGRAM) {
            cn_metrics_render_histogram_locked(m, b, f, s);
            continue;
        }
        uint64_t v = cn_metrics_slot_locked(m, s->slot);
        int negative = f->type == CN_METRIC_GAUGE && (int64_t)v < 0;
        cn_metrics_render_head(b, f->name, "", s->labels, NULL);
        cn_metrics_buf_str(b, " ");
        cn_metrics_buf_scaled(b, negative ? 0 - v : v, negative, f->unit_exp);
        cn_metrics_buf_str(b, "\n");
    }
}

void cn_metrics_render(struct cn_metrics *m, char **out, size_t *len)
{
    struct cn_metrics_buf b = {0};
    cn_metrics_buf_reserve(&b, 0);
    b.p[0] = '\0';
    cn_metrics_freeze(m);
    pthread_mutex_lock(&m->render_lock);
    for (uint32_t i = 0; i < m->n_collect; i++)
        m->collect[i].cb(m, m->collect[i].arg);
    pthread_mutex_lock(&m->lock);
    for (uint32_t i = 0; i < m->n_fams; i++)
        cn_metrics_render_family_locked(m, &b, &m->fams[i]);
    pthread_mutex_unlock(&m->lock);
    pthread_mutex_unlock(&m->render_lock);
    *out = b.p;
    *len = b.len;
}
