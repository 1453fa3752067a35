/* The gateway process: the settings, the ring over the storage nodes, the
 * credentials, and one event-loop thread per core, each with its own
 * SO_REUSEPORT listener, storage client and store. */
#ifndef GW_SERVER_H
#define GW_SERVER_H

#include <stdint.h>

#include "config.h"

#include "cn/rc.h"

struct gw_server;

/* Builds everything from cfg (borrowed; must outlive the server): loads the
 * credentials, builds the ring, binds the listeners. Returns NULL with err. */
struct gw_server *gw_server_new(const struct gw_config *cfg, char err[CN_ERR_LEN]);

/* The port the listeners are bound to (useful with http.port = 0). */
int gw_server_port(const struct gw_server *s);

/* Runs the loops until SIGINT/SIGTERM; returns CN_OK. */
int gw_server_run(struct gw_server *s);

void gw_server_free(struct gw_server *s);

#endif
