/* not_a_plugin: a shared library without ropecheck_plugin_entry, for the test that
 * `ropecheck verify --plugin` refuses it with exit 2 and a message naming the missing symbol.
 */
#include <stdint.h>

int32_t some_other_entry(void);

int32_t some_other_entry(void) { return 0; }
