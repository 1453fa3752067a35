/* cairn-admin keygen: a new CURVE key pair for a node, a gateway or an
 * operator (docs/security.md). */
#ifndef ADM_KEYGEN_H
#define ADM_KEYGEN_H

#include "cn/rc.h"

/* Writes PREFIX.key (the secret key, mode 0600) and PREFIX.pub (the public
 * key, 0644), refusing to overwrite either; prints the public key. Returns
 * CN_OK, or an error with err, in which case neither file was left behind
 * (an existing one is untouched). */
int adm_keygen_run(const char *prefix, char err[CN_ERR_LEN]);

#endif
