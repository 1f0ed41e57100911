/* An NVTX tool for the tests: loaded through NVTX_INJECTION64_PATH, it
 * writes one line per annotation to the file named by CUABI_NVTX_RECORD,
 * in the order the calls arrive:
 *
 *   create <domain>
 *   push <domain> <argb as 8 hex digits, or -> <message>
 *   pop <domain>
 *   start <domain> <argb> <message>
 *   end <domain>
 *   mark <domain> <argb> <message>
 *
 * <domain> is the name a domain was created with, "-" for NVTX's default
 * domain. Every binding's NVTX test reads this file. */
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nvtxDomainRegistration_st {
  char name[256];
};

static FILE* out;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static nvtxRangeId_t next_id = 1;

static const char* name_of(nvtxDomainHandle_t d) { return d ? d->name : "-"; }

static void line(const char* what, nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  pthread_mutex_lock(&lock);
  if (out) {
    if (!a) {
      fprintf(out, "%s %s\n", what, name_of(d));
    } else {
      char color[16] = "-";
      if (a->colorType == NVTX_COLOR_ARGB) snprintf(color, sizeof color, "%08x", a->color);
      const char* message = a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "?";
      fprintf(out, "%s %s %s %s\n", what, name_of(d), color, message ? message : "(null)");
    }
    fflush(out);
  }
  pthread_mutex_unlock(&lock);
}

static nvtxDomainHandle_t NVTX_API create(const char* name) {
  nvtxDomainHandle_t d = (nvtxDomainHandle_t)calloc(1, sizeof *d);
  if (!d) return NULL;
  snprintf(d->name, sizeof d->name, "%s", name ? name : "(null)");
  line("create", d, NULL);
  return d;
}

static int NVTX_API push(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  line("push", d, a);
  return 0;
}

static int NVTX_API pop(nvtxDomainHandle_t d) {
  line("pop", d, NULL);
  return 0;
}

static nvtxRangeId_t NVTX_API start(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  line("start", d, a);
  pthread_mutex_lock(&lock);
  nvtxRangeId_t id = next_id++;
  pthread_mutex_unlock(&lock);
  return id;
}

static void NVTX_API end(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  (void)id;
  line("end", d, NULL);
}

static void NVTX_API mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  line("mark", d, a);
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  const char* path = getenv("CUABI_NVTX_RECORD");
  out = path ? fopen(path, "a") : NULL;
  const NvtxExportTableCallbacks* callbacks =
      (const NvtxExportTableCallbacks*)get_export_table(NVTX_ETID_CALLBACKS);
  if (!callbacks) return 0;
  NvtxFunctionTable table = NULL;
  unsigned int size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || !table) return 0;
  if (size <= NVTX_CBID_CORE2_DomainCreateA) return 0;
  *table[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)create;
  *table[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)push;
  *table[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)pop;
  *table[NVTX_CBID_CORE2_DomainRangeStartEx] = (NvtxFunctionPointer)start;
  *table[NVTX_CBID_CORE2_DomainRangeEnd] = (NvtxFunctionPointer)end;
  *table[NVTX_CBID_CORE2_DomainMarkEx] = (NvtxFunctionPointer)mark;
  return 1;
}
