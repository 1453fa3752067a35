/* The shared timer and in-flight accounting of the system record followers
 * (sysrec.h). */
#include "sysrec.h"

#include "cn/alloc.h"
#include "cn/log.h"
#include "cn/rc.h"

struct gw_sysrec {
    struct event *timer;
    int64_t interval_ms;
    gw_sysrec_round_cb round;
    void *arg;
    uint32_t inflight;   /* requests whose callbacks have not run */
    int in_round;        /* a round started and has not ended */
    int closed;
};

static void gw_sysrec_arm(struct gw_sysrec *w, int64_t ms)
{
    if (w->closed)
        return;
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    evtimer_add(w->timer, &tv);
}

static void gw_sysrec_on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gw_sysrec *w = arg;
    if (w->closed)
        return;
    if (w->in_round || w->inflight != 0) {   /* never two rounds */
        gw_sysrec_arm(w, w->interval_ms);
        return;
    }
    w->in_round = 1;
    w->round(w->arg);
}

struct gw_sysrec *gw_sysrec_new(struct event_base *base, int64_t first_ms, int64_t interval_ms,
                                gw_sysrec_round_cb round, void *arg)
{
    struct gw_sysrec *w = cn_calloc(1, sizeof(*w));
    w->timer = evtimer_new(base, gw_sysrec_on_timer, w);
    w->interval_ms = interval_ms;
    w->round = round;
    w->arg = arg;
    gw_sysrec_arm(w, first_ms);
    return w;
}

void gw_sysrec_round_end(struct gw_sysrec *w)
{
    w->in_round = 0;
    gw_sysrec_arm(w, w->interval_ms);
}

void gw_sysrec_op_start(struct gw_sysrec *w)
{
    w->inflight++;
}

int gw_sysrec_op_done(struct gw_sysrec *w)
{
    CN_ASSERT(w->inflight > 0);
    w->inflight--;
    return w->closed;
}

int gw_sysrec_closed(const struct gw_sysrec *w)
{
    return w->closed;
}

void gw_sysrec_close(struct gw_sysrec *w)
{
    if (w == NULL)
        return;
    w->closed = 1;
    evtimer_del(w->timer);
}

int gw_sysrec_free(struct gw_sysrec *w, const char *what)
{
    if (w == NULL)
        return 1;
    if (w->inflight != 0) {
        CN_LOG(CN_LOG_WARN, "%s: %u requests never answered: follower not freed", what,
               w->inflight);
        return 0;
    }
    event_free(w->timer);
    cn_free(w);
    return 1;
}
