/* cairn-admin keygen (see keygen.h). */
#include "keygen.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cn/curve_key.h"
#include "msg/curve.h"

int adm_keygen_run(const char *prefix, char err[CN_ERR_LEN])
{
    struct cn_curve_key pub, secret;
    char key_path[4096], pub_path[4096];
    if (snprintf(key_path, sizeof(key_path), "%s.key", prefix) >= (int)sizeof(key_path) ||
        snprintf(pub_path, sizeof(pub_path), "%s.pub", prefix) >= (int)sizeof(pub_path)) {
        snprintf(err, CN_ERR_LEN, "key file prefix too long");
        return CN_INVAL;
    }
    int rc = msg_curve_keypair(&pub, &secret, err);
    if (rc == CN_OK && access(pub_path, F_OK) == 0) {
        snprintf(err, CN_ERR_LEN, "%s exists; not overwritten", pub_path);
        rc = CN_IO;
    }
    if (rc == CN_OK)
        rc = cn_curve_key_write(key_path, &secret, 1, err);
    if (rc == CN_OK && (rc = cn_curve_key_write(pub_path, &pub, 0, err)) != CN_OK)
        unlink(key_path);
    memset(&secret, 0, sizeof(secret));
    if (rc == CN_OK)
        printf("%s\n", pub.z85);
    return rc;
}
