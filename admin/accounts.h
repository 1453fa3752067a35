/* cairn-admin account create|list|delete (docs/operations.md "Accounts"):
 * the accounts kept in the cluster (gateway/auth/account_record.h), written
 * to their N ring replicas like keys. An account is the owner id of its
 * buckets and of its keys (key create --account). */
#ifndef ADM_ACCOUNTS_H
#define ADM_ACCOUNTS_H

#include "account_record.h"
#include "keys.h"
#include "records.h"

/* Each returns the exit status: 0 done, 1 failed (printed on stderr), 2 usage. */
int adm_accounts_create(const struct adm_keys_opts *o, const char *name);
int adm_accounts_list(const struct adm_keys_opts *o);
/* Refused (1) while the account owns buckets or keys, unless force: then
 * its keys are deleted first and its buckets are left (named in the output). */
int adm_accounts_delete(const struct adm_keys_opts *o, const char *ref, int force);

/* The account ref names (its id, else its unique name) into *a. CN_OK,
 * CN_NOTFOUND (printed), or CN_IO (no node answered; printed). */
int adm_accounts_resolve(const struct adm_keys_opts *o, struct adm_rec_conn *cx,
                         const char *ref, struct gw_account_record *a);

#endif
