// A loopback RTSP server for the stream tests (gst-rtsp-server): serves an H.264 .mp4 file,
// looping, at rtsp://127.0.0.1:PORT/MOUNT. Prints "ready rtsp://127.0.0.1:PORT/MOUNT" on stdout
// once listening (PORT 0 picks a free port), then serves until killed. With
// EDGEFUSE_TEST_RTSP_USER and EDGEFUSE_TEST_RTSP_PASSWORD set it requires those credentials
// (RTSP basic authentication), so the credential tests talk to a server that checks them.
//   rtsp_test_server FILE.mp4 [PORT] [MOUNT]
#include <cstdio>
#include <cstdlib>
#include <string>

#include <gst/gst.h>
#include <gst/rtsp-server/rtsp-server.h>

namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Only a client presenting user:password may see or build the media.
void require_basic_auth(GstRTSPServer* server, GstRTSPMediaFactory* factory, const char* user, const char* password) {
  GstRTSPAuth* auth = gst_rtsp_auth_new();
  gchar* basic = gst_rtsp_auth_make_basic(user, password);
  GstRTSPToken* token = gst_rtsp_token_new(GST_RTSP_TOKEN_MEDIA_FACTORY_ROLE, G_TYPE_STRING, "camera-user", nullptr);
  gst_rtsp_auth_add_basic(auth, basic, token);
  g_free(basic);
  gst_rtsp_token_unref(token);
  gst_rtsp_server_set_auth(server, auth);
  g_object_unref(auth);
  GstRTSPPermissions* permissions = gst_rtsp_permissions_new();
  gst_rtsp_permissions_add_role(permissions, "camera-user", GST_RTSP_PERM_MEDIA_FACTORY_ACCESS, G_TYPE_BOOLEAN, TRUE,
                                GST_RTSP_PERM_MEDIA_FACTORY_CONSTRUCT, G_TYPE_BOOLEAN, TRUE, nullptr);
  gst_rtsp_media_factory_set_permissions(factory, permissions);
  gst_rtsp_permissions_unref(permissions);
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: rtsp_test_server FILE.mp4 [PORT] [MOUNT]\n");
    return 2;
  }
  const std::string file = argv[1];
  const std::string port = argc > 2 ? argv[2] : "0";
  const std::string mount = std::string("/") + (argc > 3 ? argv[3] : "street");

  GstRTSPServer* server = gst_rtsp_server_new();
  gst_rtsp_server_set_address(server, "127.0.0.1");
  gst_rtsp_server_set_service(server, port.c_str());
  GstRTSPMediaFactory* factory = gst_rtsp_media_factory_new();
  // Re-muxing the file's H.264 as a camera would send it: parameter sets with every keyframe.
  const std::string launch =
      "( filesrc location=" + quoted(file) + " ! qtdemux ! h264parse config-interval=-1 ! rtph264pay name=pay0 pt=96 )";
  gst_rtsp_media_factory_set_launch(factory, launch.c_str());
  gst_rtsp_media_factory_set_shared(factory, TRUE);
  const char* user = std::getenv("EDGEFUSE_TEST_RTSP_USER");
  const char* password = std::getenv("EDGEFUSE_TEST_RTSP_PASSWORD");
  if (user != nullptr && password != nullptr) require_basic_auth(server, factory, user, password);
  GstRTSPMountPoints* mounts = gst_rtsp_server_get_mount_points(server);
  gst_rtsp_mount_points_add_factory(mounts, mount.c_str(), factory);
  g_object_unref(mounts);
  if (gst_rtsp_server_attach(server, nullptr) == 0) {
    std::fprintf(stderr, "rtsp_test_server: cannot listen on 127.0.0.1:%s\n", port.c_str());
    return 1;
  }
  std::printf("ready rtsp://127.0.0.1:%d%s\n", gst_rtsp_server_get_bound_port(server), mount.c_str());
  std::fflush(stdout);
  GMainLoop* loop = g_main_loop_new(nullptr, FALSE);
  g_main_loop_run(loop);
  return 0;
}
