/* A C program written against the vendor C interface, linked with the installed host runtime
 * (pkg-config rknnxx-host, or CMake's rknnxx::host_runtime). It opens a model that is not one and
 * checks that the runtime refuses it with RKNN_ERR_MODEL_INVALID and says why through the rknnxx
 * extension rknnxx_host_last_error (docs/runtime-extensions.md). Prints "host runtime: ..." and
 * exits 0 when all is as expected. */
#include <rknnxx/abi/c_api.h>

#include <stdio.h>
#include <string.h>

const char* rknnxx_host_last_error(void); /* the extension, declared by the caller */

int main(void) {
  unsigned char not_a_model[16] = {0x08, 0x07, 'n', 'o', 't', ' ', 'a', ' ', 'm', 'o', 'd', 'e', 'l', 0, 0, 0};
  rknn_context ctx = 0;
  const int rc = rknn_init(&ctx, not_a_model, sizeof not_a_model, 0, NULL);
  const char* why = rknnxx_host_last_error();
  if (rc != RKNN_ERR_MODEL_INVALID || why == NULL || strstr(why, "ONNX") == NULL) {
    fprintf(stderr, "unexpected: rknn_init returned %d, last error \"%s\"\n", rc, why ? why : "(null)");
    return 1;
  }
  printf("host runtime: rknn_init refused a non-model: %s\n", why);
  return 0;
}
