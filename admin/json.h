/* JSON output of cairn-admin's --json: strings on stdout. */
#ifndef ADM_JSON_H
#define ADM_JSON_H

#include <stdio.h>
#include <string.h>

/* Writes s[n] as a JSON string (control and non-ASCII bytes as \u00XX). */
static inline void adm_json_str(const char *s, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static inline void adm_json_cstr(const char *s)
{
    adm_json_str(s, strlen(s));
}

#endif
