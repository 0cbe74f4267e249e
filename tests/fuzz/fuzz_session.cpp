// libFuzzer target for the session parser (io/Session.h): bytes are parsed as JSON and, when that
// gives an object, as a session. sessionFromJson must return a session or throw SessionError, never
// crash, overrun or hang; anything else escaping counts as a finding. Only exploratory fuzzing
// (scripts/fuzz.sh) runs it: it links the main build's wfs_core.
#include "io/Session.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size > (1 << 20))
        return 0;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray(reinterpret_cast<const char*>(data), qsizetype(size)));
    if (!doc.isObject())
        return 0;
    try {
        const wfs::Session session = wfs::sessionFromJson(doc.object(), "fuzz");
        (void)wfs::sessionToJson(session, "fuzz.json"); // and back
    } catch (const wfs::SessionError&) {
    }
    return 0;
}
