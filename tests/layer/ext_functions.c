#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
/* Extension entry points keep working under coex: clGetExtensionFunctionAddress[ForPlatform] give
 * the loader's clIcdGetPlatformIDsKHR, and calling it lists the same platforms. */
#include "common/app_util.h"

#include <CL/cl_ext.h>

typedef cl_int(CL_API_CALL* icd_get_platform_ids_fn)(cl_uint, cl_platform_id*, cl_uint*);

int main(void) {
  cl_platform_id platform;
  cl_uint count = 0;
  APP_CHECK(clGetPlatformIDs(1, &platform, &count));
  void* for_platform = clGetExtensionFunctionAddressForPlatform(platform, "clIcdGetPlatformIDsKHR");
  void* global = clGetExtensionFunctionAddress("clIcdGetPlatformIDsKHR");
  void* unknown = clGetExtensionFunctionAddressForPlatform(platform, "clNoSuchFunctionCOEX");
  app_expect(for_platform != NULL, "clIcdGetPlatformIDsKHR is found for the platform");
  app_expect(unknown == NULL, "an unknown extension function is not found");
  cl_uint through_extension = 0;
  if (for_platform) APP_CHECK(((icd_get_platform_ids_fn)for_platform)(0, NULL, &through_extension));
  app_expect(through_extension >= 1, "the extension function lists the platforms");
  /* The harness compares this line bare and under coex: each bit is one lookup's outcome. */
  uint64_t outcome = (uint64_t)(for_platform != NULL) | (uint64_t)(global != NULL) << 1 |
                     (uint64_t)(unknown != NULL) << 2 | (uint64_t)(through_extension == count) << 3;
  printf("checksum lookups %016llx\n", (unsigned long long)outcome);
  return app_finish();
}
