/* Request handlers of the storage node: one per op, each mapping a decoded
 * request onto the engine (store.h) and building the reply. The entry point,
 * sn_handler_run(), is declared in server.h. */
#ifndef SN_HANDLER_H
#define SN_HANDLER_H

#include "server.h"

/* The status a store return code maps to. */
enum msg_status sn_handler_status(int rc);

#endif
