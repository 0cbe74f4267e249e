#include "engine/BackendFactory.h"

#include "fasth/HouseholderRunner.h"
#include "optics/CpuModel.h"

#include <cstdlib>
#include <filesystem>

#ifdef WFS_GPU_MODULE_FILE
#include <dlfcn.h>
#endif

namespace wfs {

namespace {
constexpr const char* kCudaNotBuilt =
    "no GPU: this build has no CUDA backend (CUDA not built; configure with -DWFS_CUDA=ON and the CUDA toolkit)";

#ifdef WFS_GPU_MODULE_FILE
// The folder of the program or shared object this code is linked into (the executable, or the Python module).
std::string folderOfThisCode()
{
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&folderOfThisCode), &info) == 0 || info.dli_fname == nullptr)
        return {};
    return std::filesystem::path(info.dli_fname).parent_path().string();
}

// Where the module may be, first match wins (BackendFactory.h).
std::vector<std::string> gpuModuleCandidates()
{
    if (const char* file = std::getenv("WFS_GPU_MODULE"); file != nullptr && *file != '\0')
        return {file};
    std::vector<std::string> candidates;
    if (const std::string folder = folderOfThisCode(); !folder.empty()) {
        candidates.push_back(folder + "/../lib/wavefront-studio/" WFS_GPU_MODULE_FILE);        // the build tree
        candidates.push_back(folder + "/" WFS_GPU_MODULE_FROM_BINDIR "/" WFS_GPU_MODULE_FILE); // installed programs
    }
    candidates.push_back(WFS_GPU_MODULE_INSTALLED); // the installed Python module
    return candidates;
}

struct LoadedGpuModule {
    std::optional<GpuBackendHooks> hooks;
    GpuModuleState state;
};

LoadedGpuModule loadGpuModule()
{
    LoadedGpuModule loaded;
    std::string looked;
    for (const std::string& candidate : gpuModuleCandidates()) {
        std::error_code error;
        if (!std::filesystem::is_regular_file(candidate, error)) {
            looked += (looked.empty() ? "" : ", ") + candidate;
            continue;
        }
        // Never closed: the hooks' code lives in it. RTLD_LOCAL: its copy of core stays its own.
        void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
            const char* why = dlerror();
            const std::string reason = why ? why : "unknown reason";
            loaded.state.error = "no GPU: the CUDA backend (" + candidate + ") could not be loaded: " + reason;
            if (reason.find("map segment") != std::string::npos) // what mmap's ENOMEM reads as
                loaded.state.error += " (too little address space for the CUDA libraries, about 1.5 GB: is `ulimit -v` set?)";
            return loaded;
        }
        using Entry = void (*)(GpuBackendHooks*);
        auto entry = reinterpret_cast<Entry>(dlsym(handle, kGpuModuleEntry));
        if (entry == nullptr) {
            loaded.state.error = "no GPU: " + candidate + " has no " + kGpuModuleEntry + " (not this version's CUDA backend)";
            return loaded;
        }
        GpuBackendHooks hooks;
        entry(&hooks);
        loaded.hooks = std::move(hooks);
        loaded.state.loadedFrom = candidate;
        return loaded;
    }
    loaded.state.error = "no GPU: the CUDA backend module was not found (looked for " + looked + "; WFS_GPU_MODULE names it)";
    return loaded;
}

// Loaded once, on first use, by whichever thread asks first.
const LoadedGpuModule& gpuModule()
{
    static const LoadedGpuModule loaded = loadGpuModule();
    return loaded;
}

const GpuBackendHooks& gpuHooks()
{
    const LoadedGpuModule& loaded = gpuModule();
    if (!loaded.hooks)
        throw BackendUnavailable(loaded.state.error);
    return *loaded.hooks;
}
#else
const GpuBackendHooks& gpuHooks()
{
    throw BackendUnavailable(kCudaNotBuilt);
}
#endif
} // namespace

GpuModuleState gpuModuleState()
{
#ifdef WFS_GPU_MODULE_FILE
    return gpuModule().state;
#else
    return {{}, kCudaNotBuilt};
#endif
}

BackendStatus backendStatus(BackendKind kind)
{
    BackendStatus status;
    status.kind = kind;
    if (kind == BackendKind::Cpu) {
        status.available = true;
        status.device = cpuName();
        return status;
    }
    try {
        return gpuHooks().status();
    } catch (const BackendUnavailable& e) {
        status.reason = e.what();
        return status;
    }
}

std::vector<BackendStatus> backendStatuses()
{
    return {backendStatus(BackendKind::Cpu), backendStatus(BackendKind::Gpu)};
}

std::unique_ptr<ModelEvaluator> makeEvaluator(BackendKind kind, std::shared_ptr<const Problem> problem, const EvaluatorOptions& options,
                                              GradientKind gradient)
{
    std::unique_ptr<ModelEvaluator> evaluator;
    if (kind == BackendKind::Cpu)
        evaluator = makeCpuEvaluator(std::move(problem), options);
    else
        evaluator = gpuHooks().makeEvaluator(std::move(problem), options);
    if (gradient == GradientKind::FiniteDifference)
        evaluator = makeFiniteDifferenceEvaluator(std::move(evaluator));
    return evaluator;
}

std::unique_ptr<fasth::HouseholderRunner> makeFasthRunner(BackendKind kind)
{
    if (kind == BackendKind::Cpu)
        return fasth::makeCpuRunner();
    return gpuHooks().makeFasthRunner();
}

} // namespace wfs
