/* nl_names.h: stream and consumer names as collectd identifier parts. */
#ifndef NL_NAMES_H
#define NL_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* Writes into out (outlen bytes, at least 16) a name collectd can hold:
 * control characters and '/' become '_'. A name that had to be changed or
 * does not fit is cut at a UTF-8 character boundary and given a suffix
 * "~xxxxxxxx" (a hash of the whole original), so distinct names never map
 * to the same identifier silently. Returns 1 when the name was changed, 0
 * when it was copied as is. */
int nl_name_fit(const char *in, char *out, size_t outlen);

/* Writes account into out (outlen bytes) as the account part of a plugin
 * instance "<instance>-<account>-<stream>": every '-' as "~2d" and every
 * '~' as "~7e", so the part holds no '-' and the first '-' after it ends
 * it (account "a-b" with stream "c" and account "a" with stream "b-c" are
 * "a~2db-c" and "a-b-c"). The rule is reversible: "~2d" and "~7e" back to
 * '-' and '~'. Returns 1 when the name was changed, 0 when copied as is,
 * -1 when it does not fit (out then holds as much as fits, cut before an
 * escape). */
int nl_name_account_part(const char *account, char *out, size_t outlen);

/* Like nl_name_fit, for one token of a NATS subject: white space, control
 * characters, '.', '*' and '>' become '_' (so the result is never a
 * wildcard), and an empty name becomes "~xxxxxxxx". Returns 1 when the
 * name was changed, 0 when copied as is. */
int nl_name_token(const char *in, char *out, size_t outlen);

/* Returns true when name can stand as one token of a NATS subject as it
 * is: not empty, and none of the characters nl_name_token replaces. */
bool nl_subject_token_valid(const char *name);

/* Writes name into buf (len bytes) as one shell word for a fix command:
 * unchanged when it holds only letters, digits, '_' and '-', else in single
 * quotes. Returns buf. */
const char *nl_shell_word(const char *name, char *buf, size_t len);

/* Room for one name of the server's longest (255 bytes) as a shell word,
 * every byte a quote at worst. */
#define NL_SHELL_NAME_MAX 1024

/* Returns the length of the valid UTF-8 sequence at s (1 to 4), or 0 when
 * the bytes there are not valid UTF-8. */
size_t nl_utf8_len(const unsigned char *s);

/* True when s is valid UTF-8 throughout. */
bool nl_utf8_valid(const char *s);

/* True when name can be given to the nats CLI as it is, shell-quoted: at
 * most 255 bytes (the server's limit), valid UTF-8 (JSON output would show
 * other bytes as '?'), not starting with '-' (it would be taken for an
 * option), and without control characters. */
bool nl_cli_name_usable(const char *name);

/* Copies text into out (len bytes) so that it prints safely in a log line,
 * a terminal or a check runner's output: control characters (also the
 * UTF-8 C1 controls) become '?', and '|' becomes '/' when nagios is set
 * (it starts Nagios performance data). Returns out. */
const char *nl_printable(const char *text, bool nagios, char *out, size_t len);

/* A stream and a consumer name as shell words, for a fix command. */
typedef struct {
  char stream[NL_SHELL_NAME_MAX];
  char consumer[NL_SHELL_NAME_MAX];
} nl_shell_names;

/* Fills q with stream and consumer (NULL: empty) as shell words. */
void nl_shell_names_of(const char *stream, const char *consumer,
                       nl_shell_names *q);

#endif
