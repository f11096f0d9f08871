package org.zrm.admin.internal;

import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * The {@code min} and {@code max} of each attribute, read from a metatype XML resource
 * ({@code OSGI-INF/metatype/*.xml}, metatype spec 105.7). The Metatype Service API offers these only
 * through {@code AttributeDefinition.validate}, whose verdict names no bound ("less than minimum"),
 * and an operator fixing a {@code .cfg} needs the bound itself.
 */
final class MetatypeBounds {

    /** One attribute's bounds, as written in the XML; either may be {@code null}. */
    record Bounds(String min, String max) {
    }

    private MetatypeBounds() {
    }

    /**
     * @param xml one metatype resource
     * @param pid a PID or factory PID
     * @return the bounds of every attribute that has one, by attribute id, for the OCD the resource
     *         designates for {@code pid}; empty when the resource does not designate it
     * @throws IOException when the resource cannot be read or is not well-formed XML
     */
    static Map<String, Bounds> read(InputStream xml, String pid) throws IOException {
        Document doc = parse(xml);
        String ocdRef = null;
        NodeList designates = doc.getElementsByTagNameNS("*", "Designate");
        for (int i = 0; i < designates.getLength() && ocdRef == null; i++) {
            Element d = (Element) designates.item(i);
            if (pid.equals(d.getAttribute("pid")) || pid.equals(d.getAttribute("factoryPid"))) {
                NodeList objects = d.getElementsByTagNameNS("*", "Object");
                if (objects.getLength() > 0) {
                    ocdRef = ((Element) objects.item(0)).getAttribute("ocdref");
                }
            }
        }
        Map<String, Bounds> out = new HashMap<>();
        if (ocdRef == null) {
            return out;
        }
        NodeList ocds = doc.getElementsByTagNameNS("*", "OCD");
        for (int i = 0; i < ocds.getLength(); i++) {
            Element ocd = (Element) ocds.item(i);
            if (!ocdRef.equals(ocd.getAttribute("id"))) {
                continue;
            }
            NodeList ads = ocd.getElementsByTagNameNS("*", "AD");
            for (int j = 0; j < ads.getLength(); j++) {
                Element ad = (Element) ads.item(j);
                String min = ad.hasAttribute("min") ? ad.getAttribute("min").strip() : null;
                String max = ad.hasAttribute("max") ? ad.getAttribute("max").strip() : null;
                if (min != null || max != null) {
                    out.put(ad.getAttribute("id"), new Bounds(min, max));
                }
            }
        }
        return out;
    }

    private static Document parse(InputStream xml) throws IOException {
        try {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            f.setNamespaceAware(true);
            // A bundle's resource, but still parsed as untrusted: no DTDs, no external entities.
            f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            f.setExpandEntityReferences(false);
            DocumentBuilder b = f.newDocumentBuilder();
            return b.parse(xml);
        } catch (ParserConfigurationException | SAXException e) {
            throw new IOException("not a readable metatype resource: " + e.getMessage(), e);
        }
    }
}
